/**
 * An application's callback settings as the dispatcher reads them for every
 * try: one load at a time per application (thousands of tries a second must
 * not each ask history when the accounts cache expires), and once loaded the
 * last value answers at once while a newer one loads in the background, at
 * most every `refreshMs`. A refresh that fails keeps the value it had. A
 * change made on this core is not served stale: it is forgotten at once.
 */
export function createCallbackSettingsCache<T>(load: (applicationId: string) => Promise<T>, refreshMs = 1000, now: () => number = Date.now) {
  interface Entry {
    loaded?: { value: T; at: number };
    loading?: Promise<T>;
  }
  const entries = new Map<string, Entry>();
  const refresh = (applicationId: string, entry: Entry): Promise<T> => {
    entry.loading ??= load(applicationId).then(
      (value) => {
        entry.loaded = { value, at: now() };
        entry.loading = undefined;
        return value;
      },
      (err: unknown) => {
        entry.loading = undefined;
        throw err;
      },
    );
    return entry.loading;
  };
  return {
    get(applicationId: string): Promise<T> {
      let entry = entries.get(applicationId);
      if (!entry) {
        entry = {};
        entries.set(applicationId, entry);
      }
      const { loaded } = entry;
      if (!loaded) return refresh(applicationId, entry);
      if (now() - loaded.at >= refreshMs) refresh(applicationId, entry).catch(() => undefined);
      return Promise.resolve(loaded.value);
    },
    /** Forgets an application's settings (changed on this core): the next try waits for them to load. */
    forget(applicationId: string): void {
      entries.delete(applicationId);
    },
  };
}
