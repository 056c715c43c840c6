import { DEFAULT_SETTINGS, mergeSettings, parseSettings, validateSettings, type Settings, type SettingsError } from '../settings/schema';
import { FILE_LIMITS } from '../settings/settings-file';
import type { BrowserApi } from './browser-api';

const KEY = 'settings';

export class InvalidSettings extends Error {
  constructor(readonly errors: SettingsError[]) {
    super(errors.length === 1 ? errors[0]!.message : `${errors.length} settings are invalid`);
  }
}

/**
 * The settings in storage.local, loaded through the schema (bad stored values fall back to
 * defaults field by field) and saved only when valid. `current` is usable at once with the
 * defaults until the stored settings are loaded.
 */
export class SettingsStore {
  private settings: Settings = parseSettings(DEFAULT_SETTINGS);
  private loading: Promise<Settings> | undefined;

  constructor(
    private readonly api: BrowserApi,
    /** Told of the settings once loaded and after every save (e.g. to apply the speed limit). */
    private readonly onChange: (settings: Settings) => void = () => {},
  ) {}

  get current(): Settings {
    return this.settings;
  }

  /** The current settings, once the stored ones were read (only the first call reads). */
  async load(): Promise<Settings> {
    this.loading ??= this.api.storage
      .get(KEY)
      .then((raw) => (this.settings = parseSettings(raw)))
      .catch(() => this.settings)
      .then((settings) => {
        this.onChange(settings);
        return settings;
      });
    await this.loading;
    return this.settings;
  }

  /** Validates the user's settings (missing fields keep their current value) and stores them. */
  async save(input: unknown): Promise<Settings> {
    await this.load();
    const errors = validateSettings(input);
    if (errors.length > 0) throw new InvalidSettings(errors);
    const next = mergeSettings(this.settings, input as object);
    await this.api.storage.set(KEY, next);
    this.settings = next;
    this.onChange(next);
    return next;
  }

  /**
   * Import: the JSON text the options page prepared (settings-file.ts: bounded, every change shown
   * and agreed to), checked like save. Its size is checked again before it is parsed.
   */
  async import(json: string): Promise<Settings> {
    if (json.length > FILE_LIMITS.bytes) throw new InvalidSettings([{ field: '', message: `larger than ${FILE_LIMITS.bytes} bytes` }]);
    let input: unknown;
    try {
      input = JSON.parse(json);
    } catch (error) {
      throw new InvalidSettings([{ field: '', message: `not valid JSON: ${error instanceof Error ? error.message : String(error)}` }]);
    }
    return this.save(input);
  }
}
