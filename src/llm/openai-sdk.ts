import type OpenAI from 'openai';

/*
 * The `openai` SDK is loaded on the first LLM call, not at start: importing it costs about half a
 * second and 30 MB, and a process that never calls a model (`steward run`, a server before its
 * first message) never needs it.
 */

type Sdk = typeof import('openai');

let loading: Promise<Sdk> | null = null;
let loaded: Sdk | null = null;

export function loadOpenAiSdk(): Promise<Sdk> {
  loading ??= import('openai').then((sdk) => {
    loaded = sdk;
    return sdk;
  });
  return loading;
}

/** The SDK if some call has loaded it (an error can only be the SDK's once it is loaded). */
export function loadedOpenAiSdk(): Sdk | null {
  return loaded;
}

export type { OpenAI };
