import { describe, expect, it } from 'vitest';
import { controlOf, errorLine, formToSettings, settingsToForm, type FormValues } from '../../../src/options/settings-form';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';

const defaults = (): Settings => parseSettings(DEFAULT_SETTINGS);

describe('settingsToForm / formToSettings', () => {
  it('shows the defaults in the page’s units', () => {
    expect(settingsToForm(defaults())).toEqual({
      takeover: true,
      alwaysTakeOver: false,
      thresholdMb: '20',
      excludedTypes: '',
      excludedSites: '',
      concurrent: '3',
      connections: '4',
      siteConnections: '',
      stall: '20',
      minBlockKb: '1024',
      maxBlockKb: '65536',
      speedLimitKbps: '',
      rules: [],
      notifyFailed: true,
      notifyCompleted: false,
      saveWhileDownloading: false,
      aria2Url: '',
      aria2Secret: '',
      aria2PlainConfirmed: false,
      aria2MinMb: '',
      aria2Sites: '',
    });
  });

  it('reads the aria2 hand-off: its address, token, rules, and refuses a plain address elsewhere unless confirmed', () => {
    const form = {
      ...settingsToForm(defaults()),
      aria2Url: ' http://nas.example:6800/jsonrpc ',
      aria2Secret: 's3cret',
      aria2MinMb: '1024',
      aria2Sites: 'releases.example\n',
    };
    const refused = formToSettings(form);
    expect(refused.errors.map((e) => e.field)).toEqual(['aria2Url']);
    expect(errorLine(refused.errors[0]!)).toMatch(/nas\.example.*https:\/\/ or wss:\/\//);
    const confirmed = formToSettings({ ...form, aria2PlainConfirmed: true });
    expect(confirmed.errors).toEqual([]);
    expect(confirmed.settings).toMatchObject({
      aria2Url: 'http://nas.example:6800/jsonrpc',
      aria2Secret: 's3cret',
      aria2PlainConfirmed: true,
      aria2MinBytes: 1024 * 2 ** 20,
      aria2Sites: ['releases.example'],
    });
    expect(settingsToForm(confirmed.settings).aria2MinMb).toBe('1024');
    expect(formToSettings({ ...form, aria2Url: 'ftp://127.0.0.1/' }).errors[0]?.field).toBe('aria2Url');
    expect(formToSettings({ ...form, aria2Url: 'http://127.0.0.1:6800/jsonrpc' }).errors).toEqual([]);
  });

  it('round-trips every field', () => {
    const settings: Settings = {
      ...defaults(),
      takeover: false,
      alwaysTakeOver: true,
      thresholdBytes: 512 * 1024,
      excludedTypes: ['application/pdf', 'video/*'],
      excludedSites: ['example.com'],
      maxConcurrentJobs: 5,
      connectionsPerServer: 6,
      connectionsPerSite: { 'downloads.example.com': 1, 'example.org': 3 },
      stallSeconds: 45,
      minBlockBytes: 64 * 1024,
      maxBlockBytes: 64 * 1024 * 1024,
      speedLimitBytesPerSec: 2.5 * 2 ** 20,
      mirrorRules: [
        {
          pattern: 'example.com/releases/',
          mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'],
          passQuery: true,
          sendCookies: false,
        },
      ],
    };
    const form = settingsToForm(settings, ['https://example.com/releases/a.iso']);
    expect(form.thresholdMb).toBe('0.5');
    expect(form.speedLimitKbps).toBe('2560');
    expect(form.siteConnections).toBe('downloads.example.com 1\nexample.org 3');
    expect(form.rules).toEqual([
      {
        pattern: 'example.com/releases/',
        mirrors: 'https://m1.example.org/pub/\nhttps://m2.example.org/',
        passQuery: true,
        sendCookies: false,
        sampleUrl: 'https://example.com/releases/a.iso',
      },
    ]);
    expect(formToSettings(form)).toEqual({ settings, errors: [] });
  });

  it('counts in the browser’s binary units and keeps bytes that are no whole unit exact on save', () => {
    const settings: Settings = {
      ...defaults(),
      thresholdBytes: 20_000_001,
      minBlockBytes: 100_000,
      maxBlockBytes: 3_333_333,
      speedLimitBytesPerSec: 1_234_567,
    };
    const form = settingsToForm(settings);
    expect(form.thresholdMb).toMatch(/^19\.0734872817993\d*$/);
    expect(Number(form.thresholdMb) * 2 ** 20).toBe(20_000_001);
    expect(Number(form.minBlockKb) * 1024).toBe(100_000);
    expect(formToSettings(form).settings).toEqual(settings);
    expect(formToSettings({ ...form, thresholdMb: '1' }).settings.thresholdBytes).toBe(1_048_576);
  });

  it('reads lists one entry per line, ignoring blank lines and spaces', () => {
    const form: FormValues = { ...settingsToForm(defaults()), excludedTypes: ' video/* \n\n application/pdf\r\n' };
    expect(formToSettings(form).settings.excludedTypes).toEqual(['video/*', 'application/pdf']);
  });

  it('reads per-site connections as "host N" lines, hosts in canonical form', () => {
    const form: FormValues = {
      ...settingsToForm(defaults()),
      siteConnections: '  Downloads.Example.com   1 \n\nhttps://cdn.example.org/\t4\r\n',
    };
    expect(formToSettings(form)).toMatchObject({
      settings: { connectionsPerSite: { 'downloads.example.com': 1, 'cdn.example.org': 4 } },
      errors: [],
    });
  });

  it('takes an empty speed limit as no limit', () => {
    expect(formToSettings({ ...settingsToForm(defaults()), speedLimitKbps: '  ' }).settings.speedLimitBytesPerSec).toBeNull();
  });
});

describe('formToSettings errors', () => {
  const withForm = (change: Partial<FormValues>) => formToSettings({ ...settingsToForm(defaults()), ...change }).errors;

  it('speaks in the units of the field', () => {
    expect(withForm({ thresholdMb: 'lots' })).toEqual([
      { field: 'thresholdBytes', message: 'Enter a number of MB from 0 to 953,674,316.' },
    ]);
    expect(withForm({ minBlockKb: '10' })).toEqual([
      { field: 'minBlockBytes', message: 'Enter a number of KB from 64 to 262,144 for the smallest block.' },
    ]);
    expect(withForm({ speedLimitKbps: '0.5' })).toEqual([
      {
        field: 'speedLimitBytesPerSec',
        message: 'Leave the speed limit empty (no limit) or enter a number of KB/s from 1 to 976,562,500.',
      },
    ]);
  });

  it('leaves the other checks to validateSettings, in page order', () => {
    expect(withForm({ connections: '9', concurrent: '', excludedSites: 'ok.example\nnot a host', stall: '2' })).toEqual([
      { field: 'excludedSites.1', message: '“not a host” is not a host name like example.com.' },
      { field: 'maxConcurrentJobs', message: 'Enter a whole number from 1 to 10.' },
      { field: 'connectionsPerServer', message: 'Enter a whole number from 1 to 6.' },
      { field: 'stallSeconds', message: 'Enter a whole number from 5 to 600.' },
    ]);
    expect(withForm({ minBlockKb: '4096', maxBlockKb: '1024' })).toEqual([
      { field: 'minBlockBytes', message: 'The smallest block must not be larger than the largest.' },
    ]);
  });

  it('names each bad per-site line, and saves none of them', () => {
    const text = [
      'downloads.example.com',
      'ok.example.com 2',
      'a b 1',
      'bad^host 2',
      'slow.example.com 9',
      'two.example.com 1.5',
      'OK.example.com 3',
    ].join('\n');
    const { settings, errors } = formToSettings({ ...settingsToForm(defaults()), siteConnections: text });
    expect(errors).toEqual([
      {
        field: 'connectionsPerSite',
        message: '"downloads.example.com": write a host and the most connections to it, like downloads.example.com 1',
      },
      { field: 'connectionsPerSite', message: '"a b 1": write a host and the most connections to it, like downloads.example.com 1' },
      { field: 'connectionsPerSite', message: '“bad^host” is not a host name like example.com.' },
      { field: 'connectionsPerSite', message: 'For slow.example.com, enter a whole number of connections from 1 to 6.' },
      { field: 'connectionsPerSite', message: 'For two.example.com, enter a whole number of connections from 1 to 6.' },
      { field: 'connectionsPerSite', message: 'The site ok.example.com is listed twice.' },
    ]);
    expect(settings.connectionsPerSite).toBeUndefined();
  });

  it('allows at most 100 sites', () => {
    const text = Array.from({ length: 101 }, (_, i) => `site${i}.example.com 2`).join('\n');
    expect(withForm({ siteConnections: text })).toEqual([{ field: 'connectionsPerSite', message: 'At most 100 entries.' }]);
  });

  it('checks mirror rules field by field', () => {
    const errors = withForm({
      rules: [
        { pattern: '', mirrors: '', passQuery: false, sendCookies: false, sampleUrl: '' },
        {
          pattern: 'example.com/pub/',
          mirrors: 'https://ok.example.org/\nftp://old.example.org/',
          passQuery: false,
          sendCookies: false,
          sampleUrl: '',
        },
      ],
    });
    expect(errors).toEqual([
      { field: 'mirrorRules.0.pattern', message: 'Enter a URL pattern: a host and path prefix, like example.com/releases/.' },
      { field: 'mirrorRules.0.mirrors', message: 'List at least one mirror prefix, like https://mirror.example.org/pub/.' },
      { field: 'mirrorRules.1.mirrors.1', message: '“ftp://old.example.org/” is not an http:// or https:// URL prefix.' },
    ]);
  });
});

describe('controlOf / errorLine', () => {
  it('maps settings fields to the control that shows them', () => {
    expect(controlOf('excludedTypes.3')).toBe('excludedTypes');
    expect(controlOf('mirrorRules.2.mirrors.0')).toBe('mirrorRules.2.mirrors');
    expect(controlOf('mirrorRules.2.pattern')).toBe('mirrorRules.2.pattern');
    expect(controlOf('mirrorRules')).toBe('mirrorRules');
    expect(controlOf('version')).toBe('');
  });

  it('names the field in the summary', () => {
    expect(errorLine({ field: 'mirrorRules.1.pattern', message: 'bad' })).toBe('Mirror rule 2: Bad.');
    expect(errorLine({ field: 'connectionsPerServer', message: 'too many' })).toBe('Most connections per server: Too many.');
    expect(errorLine({ field: '', message: 'settings must be a JSON object' })).toBe('Settings must be a JSON object.');
    expect(errorLine({ field: 'connectionsPerSite', message: 'a.example is listed twice' })).toBe(
      'Connections per site: A.example is listed twice.',
    );
  });
});
