/** A start-up failure whose message names the setting to fix; `npm start` prints it and exits 1. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
