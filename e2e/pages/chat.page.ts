import type { Locator, Page } from '@playwright/test'

/** The chat: conversation list in the sidebar, the transcript and the composer. */
export class ChatPage {
  readonly sidebar: Locator
  readonly pane: Locator
  readonly transcript: Locator
  readonly composer: Locator
  readonly sendButton: Locator
  readonly stopButton: Locator
  readonly search: Locator
  readonly title: Locator
  readonly welcome: Locator
  readonly errorBanner: Locator
  readonly dialog: Locator
  readonly jumpToLatest: Locator

  constructor(readonly page: Page) {
    this.sidebar = page.getByRole('navigation', { name: 'Conversations' })
    this.pane = page.getByRole('main', { name: 'Chat' })
    this.transcript = this.pane.getByRole('log', { name: 'Transcript' })
    this.composer = this.pane.getByRole('textbox', { name: 'Message Claude' })
    this.sendButton = this.pane.getByRole('button', { name: 'Send' })
    this.stopButton = this.pane.getByRole('button', { name: 'Stop' })
    this.search = this.sidebar.getByRole('searchbox', { name: 'Search conversations' })
    this.title = this.pane.getByRole('heading', { level: 1 })
    this.welcome = this.pane.getByRole('region', { name: 'Welcome' })
    this.errorBanner = this.transcript.getByRole('alert')
    this.dialog = page.getByRole('dialog')
    this.jumpToLatest = this.pane.getByRole('button', { name: /jump to latest/i })
  }

  /** Types a message and sends it with Enter. */
  async send(text: string): Promise<void> {
    await this.composer.fill(text)
    await this.composer.press('Enter')
  }

  /** Claude's replies, oldest first. */
  replies(): Locator {
    return this.transcript.getByRole('article', { name: "Claude's reply" })
  }

  lastReply(): Locator {
    return this.replies().last()
  }

  userMessages(): Locator {
    return this.transcript.getByRole('article', { name: 'Your message' })
  }

  /** The card of a memory command, e.g. `toolCard('create', '/memories/notes.md')`. */
  toolCard(command: string, path: string): Locator {
    return this.transcript.getByRole('region', { name: `Memory ${command} ${path}` })
  }

  /** A conversation in the sidebar list, by its exact title. */
  conversation(title: string): Locator {
    return this.sidebar.getByRole('button', { name: title, exact: true })
  }

  async openConversation(title: string): Promise<void> {
    await this.conversation(title).click()
  }

  async rename(title: string, newTitle: string): Promise<void> {
    await this.sidebar.getByRole('button', { name: `Rename ${title}` }).click()
    const field = this.sidebar.getByRole('textbox', { name: 'Conversation title' })
    await field.fill(newTitle)
    await field.press('Enter')
  }

  /** Asks to delete; the confirmation dialog stays open for the test to answer. */
  async askToDelete(title: string): Promise<void> {
    await this.sidebar.getByRole('button', { name: `Delete ${title}` }).click()
  }

  /** Scrolls the transcript up with the mouse wheel, as someone going back to read. */
  async scrollTranscriptUp(pixels = 1500): Promise<void> {
    await this.transcript.hover()
    await this.page.mouse.wheel(0, -pixels)
  }

  async searchFor(query: string): Promise<void> {
    await this.search.fill(query)
  }
}
