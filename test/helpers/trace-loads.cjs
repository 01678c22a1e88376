// Preloaded with `node --require` by the bundle test: appends every file the process
// loads (through require or the bundles' createRequire) to $AGENT_BUS_TRACE_LOADS.
const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const original = Module._load;
Module._load = function load(request, parent, isMain) {
  try {
    appendFileSync(process.env.AGENT_BUS_TRACE_LOADS, `${Module._resolveFilename(request, parent, isMain)}\n`);
  } catch {
    // A built-in or a name that does not resolve: nothing to trace.
  }
  return original.apply(this, arguments);
};
