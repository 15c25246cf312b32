/**
 * Electronegativity's static scan of src/ (see scripts/security-scan.mjs: no network). Every
 * finding is either fixed or explained in docs/security.md's table, row by row; a row whose
 * finding is gone must go too, so the document stays true.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { scan } from '../../scripts/security-scan.mjs'

const root = path.resolve(__dirname, '../..')
type Scan = Awaited<ReturnType<typeof scan>>

/** The explained findings: rows of `| \`CHECK\` | \`file\` | why |` in docs/security.md. */
async function explained(): Promise<Array<{ id: string; file: string; why: string }>> {
  const doc = await readFile(path.join(root, 'docs/security.md'), 'utf8')
  const rows = [...doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*`([^`]+)`\s*\|\s*(.+?)\s*\|\s*$/gm)]
  return rows.map(([, id, file, why]) => ({ id: id!, file: file!, why: why!.trim() }))
}

let result: Scan
beforeAll(async () => {
  result = await scan()
}, 60_000)

describe('the static security scan of the Electron code', () => {
  it('reads every file it is given', () => {
    expect(result.unparsed).toEqual([])
  })

  it('has no finding of high severity', () => {
    expect(result.findings.filter((finding) => finding.severity === 'HIGH')).toEqual([])
  })

  it('has every finding explained in docs/security.md, and no explanation left over', async () => {
    const rows = await explained()
    expect(rows.length).toBeGreaterThan(0)
    for (const finding of result.findings) {
      const row = rows.find(
        (candidate) => candidate.id === finding.id && candidate.file === finding.file,
      )
      expect(
        row,
        `${finding.id} at ${finding.file}:${finding.line} is neither fixed nor explained`,
      ).toBeDefined()
      expect(row!.why.length).toBeGreaterThan(40)
    }
    for (const row of rows) {
      const current = result.findings.some(
        (finding) => finding.id === row.id && finding.file === row.file,
      )
      expect(
        current,
        `docs/security.md explains ${row.id} in ${row.file}, which no longer occurs`,
      ).toBe(true)
    }
  })

  it('does find what it is there to find (an insecure window in a scratch folder)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-scan-'))
    try {
      await mkdir(path.join(dir, 'src'))
      await writeFile(
        path.join(dir, 'src', 'main.js'),
        `const { BrowserWindow } = require('electron')
const window = new BrowserWindow({
  webPreferences: { nodeIntegration: true, contextIsolation: false, webSecurity: false },
})
window.loadURL('http://example.com')
`,
      )
      const { findings } = await scan({ input: path.join(dir, 'src') })
      const ids = new Set(findings.map((finding) => finding.id))
      for (const id of [
        'NODE_INTEGRATION_JS_CHECK',
        'CONTEXT_ISOLATION_JS_CHECK',
        'WEB_SECURITY_JS_CHECK',
      ]) {
        expect(ids, id).toContain(id)
      }
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    }
  }, 60_000)
})
