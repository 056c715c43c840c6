import type { PlayerPortMessage } from '../messages';
import { h, setText } from '../pages-shared/dom';
import { t, type MessageKey } from '../words/i18n';
import { rateText, sizeText, stateLabel } from '../pages-shared/job-text';
import { StoredBar } from './stored-bar';

export type RouteName = 'stream' | 'mse' | 'blob' | 'hls';
export type Tone = 'info' | 'wait' | 'error';

const ROUTE_TEXT: Record<RouteName, MessageKey> = {
  stream: 'routeStream',
  mse: 'routeMse',
  blob: 'routeBlob',
  hls: 'routeHls',
};

/**
 * The player's page: the media element with the browser's own (keyboard accessible) controls,
 * the job's state, the bar of stored bytes, and one message line for waits and problems.
 * Keys (when focus is not in a control): Space/K play or pause, ←/→ seek 5 s, J/L 10 s.
 */
export class PlayerPage {
  readonly video = h('video', { 'data-testid': 'player-media', controls: true, preload: 'auto', playsinline: true });
  private readonly title = h('h1', { class: 'title' }, t('playerTitle'));
  private readonly state = h('span', { class: 'state', 'data-testid': 'player-state', role: 'status' });
  private readonly figures = h('span', { class: 'figures muted' });
  private readonly bar = new StoredBar((seconds) => {
    this.video.currentTime = seconds;
  });
  private readonly message = h('p', { class: 'message', 'data-testid': 'player-message', role: 'status', 'aria-live': 'polite' });
  private readonly route = h('p', { class: 'route muted', 'data-testid': 'player-route' });

  constructor(root: HTMLElement) {
    this.video.setAttribute('aria-label', t('playerMedia'));
    this.message.hidden = true;
    root.replaceChildren(
      h('header', {}, this.title, h('div', { class: 'status-row' }, this.state, this.figures)),
      h('main', {}, this.video, this.bar.element, this.message, this.route),
    );
    const position = () => this.bar.setPosition(this.video.currentTime, this.video.duration);
    this.video.addEventListener('timeupdate', position);
    this.video.addEventListener('durationchange', position);
    document.addEventListener('keydown', (event) => this.key(event));
  }

  /** The job and its stored bytes changed. */
  showState(state: PlayerPortMessage): void {
    const job = state.job;
    if (!job) {
      setText(this.state, t('playerGone'));
      setText(this.figures, '');
      return;
    }
    setText(this.title, job.filename);
    document.title = t('playerDocumentTitle', job.filename);
    setText(this.state, stateLabel(job));
    this.state.dataset.state = job.state;
    setText(this.figures, [sizeText(job), rateText(job)].filter(Boolean).join(' · '));
    this.bar.update(state.stored, job.size);
  }

  /** Takes back a wait (not a problem or a hint): said when the media plays after all. */
  clearWait(): void {
    if (this.message.classList.contains('wait')) this.say('');
  }

  /** One line for the user; empty hides it. */
  say(text: string, tone: Tone = 'info'): void {
    setText(this.message, text);
    this.message.hidden = text === '';
    this.message.className = `message ${tone}`;
  }

  setRoute(route: RouteName | undefined): void {
    if (route) this.route.dataset.route = route;
    else delete this.route.dataset.route;
    setText(this.route, route ? t(ROUTE_TEXT[route]) : '');
  }

  private key(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    // Controls keep their own keys (the focused video's included): only keys on the page itself.
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (target && target !== document.body && target !== document.documentElement) return;
    const video = this.video;
    const seekBy = (seconds: number) => {
      video.currentTime = Math.max(0, Math.min(video.duration || Infinity, video.currentTime + seconds));
    };
    switch (event.key) {
      case ' ':
      case 'k':
        if (video.paused) void video.play().catch(() => {});
        else video.pause();
        break;
      case 'ArrowLeft':
        seekBy(-5);
        break;
      case 'ArrowRight':
        seekBy(5);
        break;
      case 'j':
        seekBy(-10);
        break;
      case 'l':
        seekBy(10);
        break;
      default:
        return;
    }
    event.preventDefault();
  }
}
