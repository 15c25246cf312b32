import { reply } from '../test/fixtures/fake-anthropic'
import { expect, shoot, test } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { SettingsPage } from './pages/settings.page'

const answer = [
  'Saved. Here is how the two compare:',
  '',
  '| | Python | Rust |',
  '|---|---|---|',
  '| Typing | dynamic | static |',
  '| Memory | garbage collected | ownership |',
  '',
  '```python',
  'def greet(name: str) -> str:',
  '    return f"Hello, {name}!"  # friendly',
  '```',
  '',
  'More in [the Python docs](https://docs.python.org/3/).',
].join('\n')

for (const scheme of ['light', 'dark'] as const) {
  test(`chat and settings screens (${scheme})`, async ({ page, cairn, anthropic }) => {
    await page.setViewportSize({ width: 1440, height: 900 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-screens' })
    anthropic.script(
      reply.toolUse({ input: { command: 'view', path: '/memories' } }),
      reply.toolUse({
        text: 'I will note that.',
        input: {
          command: 'create',
          path: '/memories/preferences.md',
          file_text: '# Preferences\n- Favourite language: Python\n',
        },
      }),
      reply.toolUse({
        input: {
          command: 'str_replace',
          path: '/memories/preferences.md',
          old_str: 'Rust',
          new_str: 'Go',
        },
      }),
      reply.text(answer, { usage: { inputTokens: 2310, outputTokens: 182 } }),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('My favourite language is Python — remember it, and compare it with Rust.')
    await expect(chat.lastReply()).toContainText('More in the Python docs.')
    await expect(chat.lastReply()).toContainText('tokens in')
    // Highlighting loads on demand with the first code fence: the keyword gets its colour.
    await expect(chat.lastReply().getByText('def', { exact: true })).toHaveClass(/hljs-keyword/)
    await expect(
      chat.lastReply().getByRole('button', { name: 'Memory at this reply' }),
    ).toBeVisible()
    await expect(page.getByRole('region', { name: 'About' })).not.toContainText('0.1.0-e2e')
    await shoot(page, cairn, `chat-${scheme}`, { docs: scheme === 'light' })

    const settings = new SettingsPage(page)
    await settings.open()
    await expect(settings.keyStatus).toContainText('Set')
    await shoot(page, cairn, `settings-${scheme}`)
  })
}
