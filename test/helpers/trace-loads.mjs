// Preloaded with `node --import` by the bundle test: appends every file the process loads through
// require, every addon it loads itself (process.dlopen, as the SQLite addon driver does), every
// built-in module it asks for by name (process.getBuiltinModule, as the built-in SQLite driver does,
// traced as "builtin:<name>"), and every file it reads whole (how the CLI loads its bundles), to
// $AGENT_BUS_TRACE_LOADS.
import Module from 'node:module';
import fs from 'node:fs';

const log = (file) => {
  try {
    fs.appendFileSync(process.env.AGENT_BUS_TRACE_LOADS, `${file}\n`);
  } catch {
    // Nowhere to write: nothing to trace.
  }
};
const load = Module._load;
Module._load = function traced(request, parent, isMain) {
  try {
    log(Module._resolveFilename(request, parent, isMain));
  } catch {
    // A name that does not resolve: nothing to trace.
  }
  return load.apply(this, [request, parent, isMain]);
};
const dlopen = process.dlopen;
process.dlopen = function tracedDlopen(module, file, ...rest) {
  log(file);
  return dlopen.apply(this, [module, file, ...rest]);
};
const getBuiltinModule = process.getBuiltinModule;
process.getBuiltinModule = function tracedBuiltin(id) {
  log(`builtin:${id}`);
  return getBuiltinModule.apply(this, [id]);
};
const readFileSync = fs.readFileSync;
fs.readFileSync = function tracedRead(path, ...rest) {
  if (typeof path === 'string' && path.endsWith('.cjs')) log(path);
  return readFileSync.apply(this, [path, ...rest]);
};
// A grapheme segmenter costs as much to build as a module costs to load: it is traced as "Intl.Segmenter".
const Segmenter = Intl.Segmenter;
Intl.Segmenter = new Proxy(Segmenter, {
  construct(target, args, newTarget) {
    log('Intl.Segmenter');
    return Reflect.construct(target, args, newTarget);
  },
});
