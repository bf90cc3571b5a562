import type { SkillSnapshot } from '../types.ts';

/**
 * Views made of skill snapshots, each once per snapshot and key: a snapshot never changes (a
 * reload makes a new one), so a view of it never does either, and it goes with its snapshot.
 */
export class SnapshotViews {
  readonly #views = new WeakMap<SkillSnapshot, Map<string, SkillSnapshot>>();

  /** The view of `snapshot` under `key`, made by `make` the first time. */
  get(snapshot: SkillSnapshot, key: string, make: () => SkillSnapshot): SkillSnapshot {
    let views = this.#views.get(snapshot);
    if (!views) {
      views = new Map();
      this.#views.set(snapshot, views);
    }
    let view = views.get(key);
    if (!view) {
      view = make();
      views.set(key, view);
    }
    return view;
  }
}
