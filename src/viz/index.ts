/**
 * Issue 6, a lifecycle you can see: what `src/cli/` wires into `qmd lifecycle export|trace|inspect`
 * and `QMD_INSPECT`. Nothing of the product is imported here: only `xstate`, `ws`,
 * `@statelyai/inspect` and `src/lifecycle/{clock,stderr}`; the machine is passed in.
 */
export { EXPORT_FORMATS, type ExportFormat, exportMachine, isExportFormat } from './export.js';
export { createInspectObserver, type InspectObserver, type InspectObserverOptions } from './inspect-observer.js';
export { type InspectorServer, type InspectorServerOptions, serveInspector } from './inspect-server.js';
export type { JsonMachine, JsonState, JsonTransition } from './json.js';
export { describeMachine, type MachineInfo } from './model.js';
export { renderTimeline, type TimelineOptions } from './timeline.js';
export { type ParsedTrace, parseTrace, type TraceEntry, type TraceRun } from './trace-parse.js';
