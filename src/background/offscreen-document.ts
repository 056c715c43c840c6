import { OFFSCREEN_DOCUMENT_URL, type OffscreenReply, type OffscreenRequest } from '../offscreen/protocol';

let creating: Promise<void> | undefined;

/**
 * Chrome's offscreen document, opened once and kept: it runs the storage worker (the service
 * worker cannot start one), makes blob URLs (it has no URL.createObjectURL) and holds the frames
 * of streamed saves.
 */
export async function ensureOffscreenDocument(): Promise<void> {
  const existing = await chrome.runtime.getContexts?.({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
  if (existing && existing.length > 0) return;
  creating ??= chrome.offscreen
    .createDocument({
      url: OFFSCREEN_DOCUMENT_URL,
      reasons: ['WORKERS', 'BLOBS'],
      justification: 'Write downloads to disk from a worker, and make blob URLs of them to save them',
    })
    .catch((error: unknown) => {
      // Another caller created it between our check and our call.
      if (!String(error).includes('Only a single offscreen')) throw error;
    })
    .finally(() => (creating = undefined));
  await creating;
}

export async function askOffscreen(request: OffscreenRequest): Promise<OffscreenReply> {
  await ensureOffscreenDocument();
  const reply = (await chrome.runtime.sendMessage(request)) as OffscreenReply | undefined;
  if (!reply) throw new Error('the offscreen document did not answer');
  return reply;
}
