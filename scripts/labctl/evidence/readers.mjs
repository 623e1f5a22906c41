// Each load tool's summary reader, by its name in core/loadtools.mjs (a test
// keeps the two tables' names equal). A reader is a module with
//   read(dir, step)  {measured | null, client, merged, files, unreadable,
//                    versions} for the report
//   MEASURES         the core/metrics.mjs names read() measures
import * as k6 from './k6.mjs';
import * as holder from './holder.mjs';
import * as vegeta from './vegeta.mjs';
import * as h2load from './h2load.mjs';
import { DEFAULT_TOOL, loadTool } from '../core/loadtools.mjs';

export const READERS = { k6, holder, vegeta, h2load };

// readerOf TOOL: the reader of TOOL (the default tool for a step that names
// none, as hand-written plans do); a UsageError for an unknown tool.
export function readerOf(tool) {
  const name = tool ?? DEFAULT_TOOL;
  loadTool(name);
  return READERS[name];
}
