// What a queued transfer or job holds: the request with every location resolved to its id at accept
// time. A location deleted afterwards makes the work fail, as any
// request with it would (docs/api.md, "Operations" under "Locations").
export interface ObjectRef {
  location_id: string;
  path: string;
  /** The path is exact bytes, never a pattern (docs/api.md, "Exact names"); absent means false. */
  literal?: true;
}

/** A destination that is a folder ends with "/": each source keeps its own name inside it. */
export interface DestinationRef extends ObjectRef {
  folder: boolean;
}

export type TransferSpec =
  | { kind: 'copy'; source: ObjectRef; destination: ObjectRef }
  | { kind: 'move'; sources: ObjectRef[]; destination: DestinationRef }
  | { kind: 'remove'; paths: ObjectRef[] }
  | { kind: 'pull'; urls: string[]; destination: DestinationRef };

export function encodeSpec(spec: TransferSpec): string {
  return JSON.stringify(spec);
}

export function decodeSpec(text: string): TransferSpec {
  return JSON.parse(text) as TransferSpec;
}

export function decodeRef(text: string): ObjectRef {
  return JSON.parse(text) as ObjectRef;
}
