import { describe, expect, test } from 'vitest';
import { LOCAL_URL_REGEXES, LocalNetworkRules, localOrigins } from '../../../src/background/network/local-network-rules';
import { ReferrerRules } from '../../../src/background/network/referrer-rules';
import { SessionRules } from '../../../src/background/network/session-rules';
import { isLocalHost } from '../../../src/engine';
import { FakeBrowser } from '../../support/fake-browser';

const regexes = LOCAL_URL_REGEXES.map((r) => new RegExp(r));

/** What the browser's rules say of a URL (as the browser writes it) and what the engine says of its host. */
function verdicts(url: string): { rule: boolean; engine: boolean } {
  const parsed = new URL(url);
  return { rule: regexes.some((r) => r.test(parsed.href)), engine: isLocalHost(parsed.hostname) };
}

function expectAgreement(urls: string[], local: boolean): void {
  const wrong = urls.filter((url) => {
    const { rule, engine } = verdicts(url);
    return rule !== local || engine !== local;
  });
  expect(wrong, `should be ${local ? 'local' : 'public'}`).toEqual([]);
}

describe('the regexFilters of local addresses agree with the engine’s isLocalHost', () => {
  test('local addresses, as written in URLs', () => {
    expectAgreement(
      [
        'http://localhost/',
        'http://localhost:8080/a',
        'https://LOCALHOST./x?y',
        'http://app.localhost:3000/',
        'http://a.b.localhost/',
        'http://0.0.0.0/',
        'http://0.1.2.3:1/',
        'http://10.0.0.1/',
        'http://10.255.255.255/',
        'http://127.0.0.1:8080/file.bin',
        'http://127.0.0.2/',
        'http://127.255.255.254/',
        'http://2130706433/', // 127.0.0.1 as one number: the URL parser writes it dotted
        'http://0x7f.1/',
        'http://100.64.0.1/',
        'http://100.127.255.255/',
        'http://169.254.169.254/latest/meta-data/', // cloud metadata
        'http://172.16.0.1/',
        'http://172.31.255.255/',
        'http://192.168.1.1/admin',
        'http://user:pw@192.168.1.1/',
        'http://[::1]/',
        'http://[::1]:8080/x',
        'http://[::]/',
        'http://[0:0:0:0:0:0:0:1]/',
        'http://[::ffff:127.0.0.1]/',
        'http://[::ffff:7f00:1]/',
        'http://[::ffff:10.1.2.3]/',
        'http://[::ffff:0.0.0.0]/',
        'http://[::ffff:100.64.0.0]/',
        'http://[::ffff:169.254.1.1]/',
        'http://[::ffff:172.16.0.1]/',
        'http://[::ffff:192.168.0.1]/',
        'http://[fc00::1]/',
        'http://[fd12:3456:789a::1]/',
        'http://[fe80::1]/',
        'http://[febf:ffff::1]/',
        'http://[fec0::1]/', // site-local
        'http://[feff::1]/',
        'http://[ff02::1]/', // multicast
        'http://[ff00::]/',
        'http://198.18.0.1/', // benchmarking
        'http://198.19.255.255/',
        'http://192.0.0.0/', // IETF protocol assignments
        'http://192.0.0.170/',
        'http://224.0.0.1/', // multicast
        'http://239.255.255.250/',
        'http://240.0.0.1/', // reserved
        'http://255.255.255.255/', // broadcast
        'http://[::2]/', // IPv4-compatible ::0.0.0.2
        'http://[::127.0.0.1]/',
        'http://[::7f00:2]/',
        'http://[::a00:1]/',
        'http://[::c0a8:101]/',
        'http://[::c000:aa]/',
        'http://[::ffff]/',
        'http://[64:ff9b::]/', // NAT64
        'http://[64:ff9b::7f00:1]/',
        'http://[64:ff9b::10.0.0.1]/',
        'http://[64:ff9b::a9fe:a9fe]/',
        'http://[64:ff9b::c612:1]/',
        'http://[64:ff9b::c000:0]/',
        'http://[64:ff9b::1]/',
        'http://[64:ff9b:1::]/', // local-use NAT64
        'http://[64:ff9b:1:2:3:4:5:6]/',
        'http://[2002::]/', // 6to4
        'http://[2002:7f00:1::]/',
        'http://[2002:a00:1::1]/',
        'http://[2002:c0a8:101:1:2:3:4:5]/',
        'http://[2002:ac10::]/',
        'http://[2002:0:1::]/',
        'http://[2002:c000::1]/',
        'http://[2002:c000:12::]/',
        'http://[2002:e000:1::]/',
        'http://[::ffff:198.18.0.1]/',
        'http://[::ffff:192.0.0.1]/',
        'http://[::ffff:255.255.255.255]/',
      ],
      true,
    );
  });

  test('public addresses and names, including look-alikes', () => {
    expectAgreement(
      [
        'http://example.com/',
        'https://dl.example.org:8443/big.iso',
        'http://localhost.example.com/',
        'http://notlocalhost/',
        'http://mylocalhost/',
        'http://localhost.evil.com:80/',
        'http://127.0.0.1.nip.io/',
        'http://10.0.0.1.example/',
        'http://127.0.0.1@example.com/', // a user name, not the host
        'http://example.com/?next=http://127.0.0.1/',
        'http://example.com/127.0.0.1/',
        'http://1.1.1.1/',
        'http://9.255.255.255/',
        'http://11.0.0.0/',
        'http://100.63.255.255/',
        'http://100.128.0.0/',
        'http://126.255.255.255/',
        'http://128.0.0.1/',
        'http://169.253.1.1/',
        'http://169.255.1.1/',
        'http://172.15.255.255/',
        'http://172.32.0.0/',
        'http://192.167.1.1/',
        'http://192.169.1.1/',
        'http://8.8.8.8:53/',
        'http://[2001:db8::1]/',
        'http://[2606:4700::1111]/',
        'http://[::ffff:8.8.8.8]/',
        'http://[::ffff:172.32.0.1]/',
        'http://[::ffff:100.128.0.1]/',
        'http://[fb00::1]/',
        'http://[fe00::1]/',
        'http://[f::1]/',
        'http://[fc0::1]/',
        'http://198.17.255.255/',
        'http://198.20.0.0/',
        'http://198.51.100.1/', // documentation: routed nowhere, nobody's own network
        'http://192.0.1.0/',
        'http://192.0.2.1/',
        'http://223.255.255.255/',
        'http://[::8.8.8.8]/', // IPv4-compatible, public
        'http://[::808:808]/',
        'http://[::c000:100]/',
        'http://[::1:0:0]/', // three groups after "::": not ::/96
        'http://[64:ff9b::8.8.8.8]/',
        'http://[64:ff9b::c000:100]/',
        'http://[64:ff9b::1:7f00:1]/', // not 64:ff9b::/96
        'http://[64:ff9b:2::1]/',
        'http://[64:ff9a::7f00:1]/',
        'http://[2002:808:808::]/',
        'http://[2002:c000:100::1]/',
        'http://[2002:c633:6401::]/',
        'http://[2003:7f00:1::]/',
        'http://[2001::7f00:1]/', // Teredo: its IPv4 parts are the server and an obfuscated client
        'http://[fe7f::1]/',
        'http://[::ffff:198.20.0.1]/',
        'http://[::ffff:192.0.1.1]/',
        'http://[::ffff:223.0.0.1]/',
      ],
      false,
    );
  });

  test('every IPv4 /16, plain and IPv4-mapped in IPv6', () => {
    const disagree: string[] = [];
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) {
        for (const url of [`http://${a}.${b}.${(a * 7) % 256}.${b ^ 0x5a}:81/`, `http://[::ffff:${a}.${b}.0.${a}]/`]) {
          const { rule, engine } = verdicts(url);
          if (rule !== engine) disagree.push(url);
        }
      }
    }
    expect(disagree).toEqual([]);
  });

  test('every IPv4 /16 with a zero and a varied third octet, inside IPv6 as IPv4-compatible, NAT64 and 6to4', () => {
    const disagree: string[] = [];
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) {
        for (const c of [0, (a * 7) % 256]) {
          const d = b ^ 0x5a;
          const ipv4 = `${a}.${b}.${c}.${d}`;
          const [high, low] = [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
          const forms = [`http://${ipv4}/`, `http://[::${ipv4}]/`, `http://[64:ff9b::${ipv4}]/`, `http://[::ffff:${ipv4}]/`];
          // 6to4 with the rest zero (the URL parser writes "::" after the IPv4 groups) and with the rest set.
          forms.push(`http://[2002:${high}:${low}::]/`, `http://[2002:${high}:${low}:1:2:3:4:5]/`, `http://[2002:${high}:${low}::1]/`);
          for (const url of forms) {
            const { rule, engine } = verdicts(url);
            if (rule !== engine) disagree.push(url);
          }
        }
      }
    }
    expect(disagree).toEqual([]);
  });

  test('every first group of an IPv6 address, in each way the URL parser compresses it', () => {
    const disagree: string[] = [];
    for (let g = 0; g <= 0xffff; g++) {
      const hex = g.toString(16);
      for (const url of [`http://[${hex}::]/`, `http://[${hex}::1]/`, `http://[${hex}:1:2:3:4:5:6:7]/`, `http://[::${hex}]/`]) {
        const { rule, engine } = verdicts(url);
        if (rule !== engine) disagree.push(url);
      }
    }
    expect(disagree).toEqual([]);
  });

  test('are plain RE2 (what declarativeNetRequest takes): no lookarounds or back-references', () => {
    for (const regex of LOCAL_URL_REGEXES) expect(regex).not.toMatch(/\(\?[=!<]|\\[1-9]/);
  });
});

describe('localOrigins', () => {
  test('the local origins of a download whose primary is local; none when the primary is public', () => {
    expect(localOrigins('http://192.168.1.10/a.iso', ['http://192.168.1.11:8080/a.iso', 'https://mirror.example/a.iso'])).toEqual([
      'http://192.168.1.10',
      'http://192.168.1.11:8080',
    ]);
    expect(localOrigins('http://127.0.0.1:8080/x', ['http://127.0.0.1:8080/y'])).toEqual(['http://127.0.0.1:8080']);
    expect(localOrigins('https://example.com/a.iso', ['http://192.168.1.1/a.iso'])).toEqual([]);
    expect(localOrigins('not a url', ['http://127.0.0.1/'])).toEqual([]);
  });
});

describe('LocalNetworkRules', () => {
  const OWN = { initiatorDomains: ['stitch-test'], tabIds: [-1], resourceTypes: ['xmlhttprequest'] };
  /** The block rules, with ids from 1. */
  const BLOCK = LOCAL_URL_REGEXES.map((regexFilter, i) => ({
    id: i + 1,
    priority: 1,
    condition: { regexFilter, ...OWN },
    action: { type: 'block' },
  }));
  const allowRule = (id: number, origin: string) => ({
    id,
    priority: 2,
    condition: { urlFilter: `|${origin}/`, ...OWN },
    action: { type: 'allow' },
  });

  test('the first call puts the block rules in place, for Stitch’s own background requests only', async () => {
    const browser = new FakeBrowser();
    const rules = new LocalNetworkRules(browser);
    await rules.allow('job-1', 'https://example.com/a.iso', ['http://192.168.1.1/a.iso']);
    expect(browser.rules).toEqual(BLOCK);
    await rules.release('job-1');
    await rules.allow('job-2', 'https://example.com/b.iso');
    expect(browser.calls).toEqual([`rules ${BLOCK.map((rule) => `+${rule.id}`).join(' ')}`]);
  });

  test('a download on a local address allows its local origins while held; the block stays', async () => {
    const browser = new FakeBrowser();
    const rules = new LocalNetworkRules(browser);
    await rules.allow('job-1', 'http://192.168.1.10/a.iso', ['http://192.168.1.11:8080/a.iso', 'https://m.example/a.iso']);
    const next = BLOCK.length + 1;
    expect(browser.rules).toEqual([...BLOCK, allowRule(next, 'http://192.168.1.10'), allowRule(next + 1, 'http://192.168.1.11:8080')]);
    // Another owner of the same origin shares its rule, kept until the last lets go.
    await rules.allow('takeover:5', 'http://192.168.1.10/other.iso');
    await rules.release('job-1');
    expect(browser.rules).toEqual([...BLOCK, allowRule(next, 'http://192.168.1.10')]);
    await rules.release('takeover:5');
    expect(browser.rules).toEqual(BLOCK);
  });

  test('during: allowed for the task, released after it, even when it fails', async () => {
    const browser = new FakeBrowser();
    const rules = new LocalNetworkRules(browser);
    const seen = await rules.during('http://[::1]:9000/x', [], async () => browser.rules.length);
    expect(seen).toBe(BLOCK.length + 1);
    await expect(
      rules.during('http://127.0.0.1:9000/x', [], async () => {
        throw new Error('no answer');
      }),
    ).rejects.toThrow('no answer');
    await rules.allow('sync', 'https://example.com/'); // waits for the releases queued
    expect(browser.rules).toEqual(BLOCK);
  });

  test('shares the session rules with the Referer rules: distinct ids, neither removes the other’s, Referer above allow above block', async () => {
    const browser = new FakeBrowser();
    const shared = new SessionRules(browser);
    const referrers = new ReferrerRules(browser, shared);
    const local = new LocalNetworkRules(browser, shared);
    await Promise.all([
      referrers.hold('job-1', 'http://127.0.0.1:8080/a.iso', 'http://localhost:3000/page'),
      local.allow('job-1', 'http://127.0.0.1:8080/a.iso'),
    ]);
    // The Referer rule took id 1: the block rules follow it, then the allow rule.
    const blocks = BLOCK.map((rule) => [rule.id + 1, 'block']);
    expect(browser.rules.map((r) => [r.id, r.priority, r.action.type])).toEqual([
      [1, 3, 'modifyHeaders'],
      ...blocks.map(([id]) => [id, 1, 'block']),
      [BLOCK.length + 2, 2, 'allow'],
    ]);
    await referrers.release('job-1');
    expect(browser.rules.map((r) => r.action.type)).toEqual([...BLOCK.map(() => 'block'), 'allow']);
    await local.release('job-1');
    await referrers.hold('job-2', 'https://example.com/b.iso', 'https://example.com/page');
    expect(browser.rules.map((r) => [r.id, r.action.type])).toEqual([...blocks, [1, 'modifyHeaders']]);
  });
});
