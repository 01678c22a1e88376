// Preloaded with `node --import` by the bundle test: appends every file the process
// loads through require (the bundles' createRequire included) to $AGENT_BUS_TRACE_LOADS.
import Module from 'node:module';
import { appendFileSync } from 'node:fs';

const original = Module._load;
Module._load = function load(request, parent, isMain) {
  try {
    appendFileSync(process.env.AGENT_BUS_TRACE_LOADS, `${Module._resolveFilename(request, parent, isMain)}\n`);
  } catch {
    // A built-in or a name that does not resolve: nothing to trace.
  }
  return original.apply(this, [request, parent, isMain]);
};
