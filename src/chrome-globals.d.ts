/**
 * The few Chrome-only APIs Stitch calls directly (not in webextension-polyfill): the offscreen
 * document API, and runtime messaging with sendResponse in the offscreen document.
 */
declare namespace chrome {
  namespace offscreen {
    function createDocument(parameters: { url: string; reasons: string[]; justification: string }): Promise<void>;
    function closeDocument(): Promise<void>;
    function hasDocument?(): Promise<boolean>;
  }
  namespace runtime {
    const id: string;
    function getURL(path: string): string;
    function sendMessage(message: unknown): Promise<unknown>;
    function getContexts?(filter: { contextTypes?: string[]; documentUrls?: string[] }): Promise<unknown[]>;
    const onMessage: {
      addListener(listener: (message: unknown, sender: unknown, sendResponse: (reply: never) => void) => boolean | undefined): void;
    };
  }
}
