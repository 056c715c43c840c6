import { describe, expect, it } from 'vitest';
import { createContextMenu, PLAY_MENU_ID, playerFromClick } from '../../../src/background/ui/context-menu';
import { mediaTypeOf, playerPath } from '../../../src/media-type';
import { FakeBrowser } from '../../support/fake-browser';

describe('"Play with Stitch"', () => {
  it('is a second menu entry on links and media', async () => {
    const browser = new FakeBrowser();
    const added: { id: string; contexts: string[] }[] = [];
    await createContextMenu({ ...browser, menus: { ...browser.menus, add: async (entry) => void added.push(entry) } }, false);
    expect(browser.calls).toEqual(['menu stitch-download']);
    expect(added[0]).toEqual({ id: PLAY_MENU_ID, title: 'Play with Stitch', contexts: ['link', 'video', 'audio'] });
  });

  it('opens the player for the media (or the link) clicked', () => {
    const media = 'https://example.com/a b.webm?x=1&y=2';
    expect(playerFromClick({ menuItemId: PLAY_MENU_ID, srcUrl: media, linkUrl: 'https://example.com/page' })).toBe(
      `player.html?url=${encodeURIComponent(media)}`,
    );
    expect(playerFromClick({ menuItemId: PLAY_MENU_ID, linkUrl: 'https://example.com/v.mp4' })).toBe(
      playerPath({ url: 'https://example.com/v.mp4' }),
    );
    expect(playerFromClick({ menuItemId: PLAY_MENU_ID, srcUrl: 'blob:https://example.com/1' })).toBeUndefined();
    expect(playerFromClick({ menuItemId: 'stitch-download', linkUrl: 'https://example.com/v.mp4' })).toBeUndefined();
  });
});

describe('the media type of a job', () => {
  it('is the server’s when it names audio or video, else a guess from the file name', () => {
    expect(mediaTypeOf('video/webm; codecs="vp8"', 'x.bin')).toBe('video/webm');
    expect(mediaTypeOf('audio/mp3', undefined)).toBe('audio/mpeg');
    expect(mediaTypeOf('application/octet-stream', 'Film.MP4')).toBe('video/mp4');
    expect(mediaTypeOf(undefined, 'song.opus')).toBe('audio/ogg');
    expect(mediaTypeOf('application/octet-stream', 'disk.iso')).toBeUndefined();
    expect(mediaTypeOf('text/html', undefined)).toBeUndefined();
  });
});
