/** The fleet's fixed numbers, as data the CLI's help and the core both read. */

/** How many times a crashed agent is restarted when `--max-restarts` does not say. */
export const DEFAULT_MAX_RESTARTS = 3;
