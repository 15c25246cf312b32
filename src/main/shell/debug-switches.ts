/**
 * The command-line switches that open a debugger's door into the running app: Chromium's
 * DevTools protocol (`--remote-debugging-port`, `--remote-debugging-pipe`), which drives the
 * window's page and so everything `window.api` reaches (the memory, the chats, Settings), and
 * Node's inspector (`--inspect` and its kin), which the `EnableNodeCliInspectArguments` fuse
 * already turns off in the packaged binary (refused here too, should a build lack the fuse).
 * A packaged Cairn refuses to start with any of them; `npm run dev` keeps them for debugging.
 */
const DEBUGGING_SWITCHES: ReadonlySet<string> = new Set([
  'remote-debugging-port',
  'remote-debugging-pipe',
  'inspect',
  'inspect-brk',
  'inspect-brk-node',
  'inspect-port',
  'inspect-wait',
  'inspect-publish-uid',
  // Node's other name for --inspect-port.
  'debug-port',
])

/**
 * The debugging switches among `args` (the command line after the program), as named there,
 * in order. Read as Chromium and Node read a switch: `--name`, `-name` (and `/name` on
 * Windows), with or without `=value`, in any case (Chromium lowercases them on Windows) and
 * with `_` for `-` (Node takes both). A bare `--` ends the switches: what follows is an
 * argument, never a switch, for both of them.
 */
export function debuggingSwitches(
  args: ReadonlyArray<string>,
  platform: NodeJS.Platform = process.platform,
): ReadonlyArray<string> {
  const found: string[] = []
  for (const arg of args) {
    if (arg === '--') break
    const prefix =
      /^(--|-)/.exec(arg)?.[0] ?? (platform === 'win32' && arg.startsWith('/') ? '/' : '')
    if (prefix === '') continue
    const name = arg.slice(prefix.length).split('=', 1)[0]!
    if (DEBUGGING_SWITCHES.has(name.toLowerCase().replaceAll('_', '-'))) found.push(name)
  }
  return found
}

/** What a packaged Cairn started with a debugging switch says before it exits (no window opens). */
export function debuggingRefusal(switches: ReadonlyArray<string>): {
  readonly title: string
  readonly content: string
} {
  const named = switches.map((name) => `--${name}`).join(', ')
  return {
    title: 'Cairn will not start with a debugger attached',
    content: `Cairn was started with ${named}, which would let another program read and change your memory, your chats and your settings through the window. An installed Cairn refuses this, so it did not start. Start Cairn without ${switches.length === 1 ? 'it' : 'them'} (check the shortcut or script that starts it).`,
  }
}
