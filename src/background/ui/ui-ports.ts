import { UI_PORT, type PortMessage } from '../../messages';
import type { UiPort } from '../browser-api';

/** The pages subscribed to live updates; each gets a snapshot first, then every change. */
export class UiPorts {
  private readonly ports = new Set<UiPort>();

  /**
   * `onViewers` hears how many pages are subscribed whenever one comes or goes; `afterSnapshot`
   * is what a page gets right after its snapshot (lists posted only when they change).
   */
  constructor(
    private readonly snapshot: () => Promise<PortMessage>,
    private readonly onViewers: (count: number) => void = () => {},
    private readonly afterSnapshot: () => PortMessage[] = () => [],
  ) {}

  connect(port: UiPort): void {
    if (port.name !== UI_PORT) return;
    this.ports.add(port);
    port.onDisconnect.addListener(() => {
      this.ports.delete(port);
      this.onViewers(this.ports.size);
    });
    void this.snapshot().then((message) => {
      for (const each of [message, ...this.afterSnapshot()]) this.post(port, each);
    });
    this.onViewers(this.ports.size);
  }

  broadcast(message: PortMessage): void {
    for (const port of this.ports) this.post(port, message);
  }

  get size(): number {
    return this.ports.size;
  }

  private post(port: UiPort, message: PortMessage): void {
    try {
      port.postMessage(message);
    } catch {
      this.ports.delete(port); // disconnected meanwhile
    }
  }
}
