/**
 * A class whose instances are the objects handed to its constructor, put together: an engine's store
 * is its ports, each made by a module of its own over one connection.
 */
export function composedOf<Whole extends object>(): new (parts: Whole) => Whole {
  return class {
    constructor(parts: Whole) {
      Object.assign(this, parts);
    }
  } as new (parts: Whole) => Whole;
}
