// What a sandbox engine template means where an administrator left a field unset. Shared with
// the sandbox service, which reads templates from catalogue events that may predate a default.

/** The running limit of a template without one: 8 hours, as engine profiles default to. */
export const DEFAULT_SANDBOX_MAX_RUNNING_SECONDS = 8n * 3600n;
