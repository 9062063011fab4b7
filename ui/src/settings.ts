// What the settings pages share: their data is loaded at once and again whenever the configuration changes;
// a write marks the page busy, shows its error, and loads the data again whatever the outcome.
import { ref, watch } from "vue";
import { errorText } from "./api";
import { configVersion } from "./store";

export function useSettings(fetch: () => Promise<void>) {
  const error = ref<string | null>(null);
  const loaded = ref(false);
  const busy = ref(false);

  async function load(): Promise<void> {
    try {
      await fetch();
      loaded.value = true;
      error.value = null;
    } catch (caught) {
      error.value = errorText(caught);
    }
  }

  async function write<T>(action: () => Promise<T>): Promise<T | undefined> {
    busy.value = true;
    error.value = null;
    try {
      return await action();
    } catch (caught) {
      error.value = errorText(caught);
      return undefined;
    } finally {
      busy.value = false;
      await load();
    }
  }

  watch(configVersion, load);
  void load();
  return { error, loaded, busy, write };
}
