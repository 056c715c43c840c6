/**
 * The few Chrome-only APIs Stitch calls directly (not in webextension-polyfill): the offscreen
 * document API, and runtime messaging with sendResponse in the offscreen document.
 */
declare namespace chrome {
  namespace offscreen {
    function createDocument(parameters: { url: string; reasons: string[]; justification: string }): Promise<void>;
    function closeDocument(): Promise<void>;
  }
  namespace runtime {
    const id: string;
    function getURL(path: string): string;
    function sendMessage(message: unknown): Promise<unknown>;
    const getContexts: ((filter: { contextTypes?: string[]; documentUrls?: string[] }) => Promise<unknown[]>) | undefined;
    const onMessage: {
      addListener(listener: (message: unknown, sender: unknown, sendResponse: (reply: unknown) => void) => boolean | undefined): void;
    };
  }
}
