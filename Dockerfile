# llm-alert-pipeline as a container: the receiver of `npm start`, its embedded store on a volume
# (DATA_DIR). Build: docker build -t llm-alert-pipeline .   Run: docs/self-hosted.md
#
# NODE_IMAGE: the official Node.js image of the Node major the Lambda runs (infra/node-function.ts,
# LAMBDA_NODE_MAJOR; a test keeps the two in step). Another base works if it has the same layout:
# Debian, node and npm in /usr/local/bin, an unprivileged user `node` (uid 1000).
ARG NODE_IMAGE=node:24-bookworm-slim

# Stage 1: install the production dependencies and bundle the sources (scripts/build-start.mjs,
# what `npm start` runs first), then drop the bundler.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --prefer-offline --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build-start.mjs scripts/
COPY functions functions
COPY shared shared
RUN node scripts/build-start.mjs && npm uninstall --no-save --omit=dev --no-audit --no-fund esbuild

# Stage 2: the runtime: the bundle and the production node_modules, nothing else; not root.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/llm-alert-pipeline \
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/.tmp/start dist
RUN mkdir -p /var/lib/llm-alert-pipeline && chown node:node /var/lib/llm-alert-pipeline
USER node
VOLUME ["/var/lib/llm-alert-pipeline"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM as npm start does: stop taking connections, let the webhooks in
# flight finish their delivery, close the store, exit 0. Give it the delivery budget (20 s) and more:
# docker stop --time 30 (compose: stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=4", "--heap-growing-percent=50", "dist/server.mjs"]
