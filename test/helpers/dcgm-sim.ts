/**
 * The dcgm-exporter part of the simulator (`vllm-sim.ts`): GPU series labelled as real exporter
 * releases print them (test/fixtures/exposition/dcgm-*.prom): the node label `Hostname` (3.x to
 * 2025) or `hostname` (2026), `pci_bus_id` from 2025, a MIG instance's `GPU_I_PROFILE`/`GPU_I_ID`,
 * and Kubernetes pod mapping's `container`/`namespace`/`pod`. Framebuffer values are MiB, GPU
 * utilization percent, the XID field the code of the last XID error (0 for none).
 * @see https://github.com/NVIDIA/dcgm-exporter (etc/default-counters.csv)
 */

/** Settable state of one GPU (`gpu` label), DCGM units (MiB, percent). */
export interface GpuState {
  hostname: string;
  /** The node label's spelling: `Hostname` before the 2026 releases, `hostname` since. Default `Hostname`. */
  hostLabel: 'Hostname' | 'hostname';
  uuid: string;
  /** DCGM's `modelName` label, the GPU product name. */
  modelName: string;
  /** Framebuffer capacity, MiB; `DCGM_FI_DEV_FB_FREE` = total − used. */
  totalMiB: number;
  /** Framebuffer used now, MiB (capped at `totalMiB` as it grows). */
  usedMiB: number;
  /** Growth of `usedMiB` in MiB per hour of the sim's clock (negative shrinks it, floored at 0). */
  growthMiBPerHour: number;
  /** `DCGM_FI_DEV_GPU_UTIL`, percent 0–100. */
  utilPercent: number;
  /** `DCGM_FI_DEV_XID_ERRORS`: the last XID code, 0 for none. */
  lastXid: number;
  /** `pci_bus_id` (printed from the 2025 releases on), e.g. `00000000:B1:00.0`. */
  pciBusId?: string;
  /** A MIG instance: profile and instance id (`1g.10gb`, `7`). */
  mig?: { profile: string; instanceId: string };
  /** Kubernetes pod mapping: the pod using the GPU. */
  pod?: { namespace: string; pod: string; container: string };
}

export const defaultGpu = (gpu: number): GpuState => ({
  hostname: 'gpu-node-1',
  hostLabel: 'Hostname',
  uuid: `GPU-${String(gpu).padStart(8, '0')}-0000-0000-0000-000000000000`,
  modelName: 'NVIDIA H100 80GB HBM3',
  totalMiB: 81_559,
  usedMiB: 0,
  growthMiBPerHour: 0,
  utilPercent: 0,
  lastXid: 0,
});

type Labels = Record<string, string>;

/** The labels of GPU `gpu`, in dcgm-exporter's order. */
export function gpuLabels(gpu: number, g: GpuState): Labels {
  return {
    gpu: String(gpu),
    UUID: g.uuid,
    ...(g.pciBusId ? { pci_bus_id: g.pciBusId } : {}),
    device: `nvidia${gpu}`,
    modelName: g.modelName,
    ...(g.mig ? { GPU_I_PROFILE: g.mig.profile, GPU_I_ID: g.mig.instanceId } : {}),
    [g.hostLabel]: g.hostname,
    ...(g.pod ? { container: g.pod.container, namespace: g.pod.namespace, pod: g.pod.pod } : {}),
  };
}

/** The DCGM families: [name, help, value per GPU]. */
export const DCGM_FAMILIES: ReadonlyArray<[string, string, (g: GpuState) => number]> = [
  ['DCGM_FI_DEV_FB_FREE', 'Framebuffer memory free (in MiB).', (g) => g.totalMiB - g.usedMiB],
  ['DCGM_FI_DEV_FB_USED', 'Framebuffer memory used (in MiB).', (g) => g.usedMiB],
  ['DCGM_FI_DEV_GPU_UTIL', 'GPU utilization (in %).', (g) => g.utilPercent],
  ['DCGM_FI_DEV_XID_ERRORS', 'Value of the last XID error encountered.', (g) => g.lastXid],
];
