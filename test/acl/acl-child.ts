// Run as `nobody` by src/main/lib/may-read-acl.test.ts: opens the memory folder of the data
// folder given, and prints (one JSON line) what Claude's `view /memories` says and what HEAD
// holds at `shared/notes.md` after the open and after a later commit. `make` creates it first.
import { execFileSync } from 'node:child_process'
import { openVersionedMemory } from '../../src/main/history/versioned-memory'

const [dataDir, step] = process.argv.slice(2) as [string, string]
const claude = (id: string) => ({ actor: 'claude', conversationId: 'c', toolUseId: id }) as const
const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
const head = () =>
  execFileSync('git', ['--git-dir', `${dataDir}/history.git`, 'show', 'main:shared/notes.md'], {
    encoding: 'utf8',
  })
if (step === 'make') {
  const write = (path: string, text: string, id: string) =>
    memory.execute({ command: 'create', path, file_text: text }, claude(id))
  await write('/memories/shared/notes.md', 'first\n', 'toolu_1')
  await write('/memories/top.md', 't\n', 'toolu_2')
} else {
  const view = await memory.execute({ command: 'view', path: '/memories' }, claude('toolu_3'))
  const afterOpen = head()
  const create = { command: 'create', path: '/memories/after.md', file_text: 'a\n' } as const
  await memory.execute(create, claude('toolu_4'))
  console.log(JSON.stringify({ view, afterOpen, afterCommit: head() }))
}
await memory.close()
