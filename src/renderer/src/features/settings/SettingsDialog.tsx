import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react'
import {
  MAX_INSTRUCTIONS_CHARS,
  type ModelInfo,
  type SettingsView,
  type ThemeSetting,
} from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { Loading } from '../../components/Feedback'
import { icons } from '../../components/icons'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useNavigation } from '../../lib/navigation'
import { useModalDialog } from '../../lib/use-modal-dialog'
import { apiKeyProblem, instructionsCount, instructionsProblem } from './limits'
import { useSettings } from './settings-context'
import './settings.css'

/**
 * The settings window: a modal dialog over the app, opened with Ctrl/Cmd+, or the gear.
 * `extraSections` are other features' settings (sync), shown after Appearance.
 */
export function SettingsDialog({ extraSections }: { readonly extraSections?: ReactNode } = {}) {
  const { openSettings } = useNavigation()
  const { state, reload } = useSettings()
  // The key field when a key is missing; otherwise the content, not the close button.
  const ref = useModalDialog('.settings-scroll')

  const close = () => openSettings(false)
  return (
    <dialog
      ref={ref}
      className="settings-dialog"
      aria-labelledby="settings-title"
      onCancel={(event) => {
        event.preventDefault()
        close()
      }}
    >
      <header className="settings-header">
        <h2 id="settings-title">Settings</h2>
        <button type="button" className="icon-button" aria-label="Close settings" onClick={close}>
          <icons.close />
        </button>
      </header>
      <div className="settings-scroll" tabIndex={-1}>
        {state.status === 'error' && (
          <Banner tone="error" title="Could not load settings" onRetry={reload}>
            {state.message}
          </Banner>
        )}
        <Loading active={state.status === 'loading'} label="Loading settings…" />
        {state.status === 'ready' && state.settings.settingsProblem && (
          <Banner tone="warning" title="Your settings file could not be read">
            {state.settings.settingsProblem}
          </Banner>
        )}
        {state.status === 'ready' && state.settings.apiKeyProblem && (
          <Banner tone="warning" title="Your saved API key could not be read">
            {state.settings.apiKeyProblem}
          </Banner>
        )}
        {state.status === 'ready' && (
          <SettingsForm settings={state.settings} onClose={close} extra={extraSections} />
        )}
      </div>
    </dialog>
  )
}

// Which key is in use and where it lives. A key saved here wins over ANTHROPIC_API_KEY.
const keySources: Readonly<Record<SettingsView['apiKeySource'], string>> = {
  os: 'The key saved here is in use. It is stored encrypted by your system’s keychain.',
  plaintext:
    'The key saved here is in use. It is stored without encryption, because this system offers no keychain. Anyone who can read your data folder can read it.',
  memory:
    'The key saved here is in use. It is kept in memory for this session only; it is forgotten when Cairn quits.',
  env: 'The key from the ANTHROPIC_API_KEY environment variable is in use. A key saved here would be used instead.',
  none: 'Cairn needs an Anthropic API key to talk to Claude.',
}

/** What the key status says: which key is in use, and the environment's key when it stands by. */
function keySourceText(settings: SettingsView): string {
  const text = keySources[settings.apiKeySource]
  if (!settings.envApiKey || settings.apiKeySource === 'env' || settings.apiKeySource === 'none')
    return text
  return `${text} ANTHROPIC_API_KEY is also set in the environment; it is used only while no key is saved here.`
}

function ApiKeySection({ settings }: { readonly settings: SettingsView }) {
  const { setApiKey, clearApiKey } = useSettings()
  const [key, setKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState<{ tone: 'success' | 'error'; text: string } | null>(null)
  const fieldId = useId()

  const save = async (event: FormEvent) => {
    event.preventDefault()
    if (!key.trim()) return
    const problem = apiKeyProblem(key)
    if (problem) {
      setNotice({ tone: 'error', text: `The key was not saved. ${problem}` })
      return
    }
    await change(
      async () => {
        await setApiKey(key.trim())
        setKey('')
      },
      settings.envApiKey
        ? 'API key saved. It is used from now on instead of the ANTHROPIC_API_KEY environment variable.'
        : 'API key saved.',
      'The key was not saved.',
    )
  }
  const remove = () =>
    change(
      clearApiKey,
      settings.envApiKey
        ? 'API key removed from Cairn. The key from the ANTHROPIC_API_KEY environment variable is used now.'
        : 'API key removed from Cairn.',
      'The key was not removed.',
    )
  /** Runs a change to the key while the section is busy, then says how it went. */
  async function change(run: () => Promise<unknown>, done: string, failed: string) {
    setBusy(true)
    try {
      await run()
      setNotice({ tone: 'success', text: done })
    } catch (error) {
      setNotice({ tone: 'error', text: `${failed} ${errorMessage(error)}` })
    } finally {
      setBusy(false)
    }
  }

  const stored =
    settings.apiKeySource === 'os' ||
    settings.apiKeySource === 'plaintext' ||
    settings.apiKeySource === 'memory'
  return (
    <section className="settings-section" aria-labelledby={`${fieldId}-title`}>
      <h3 id={`${fieldId}-title`}>Anthropic API key</h3>
      <div className="key-status" role="status" aria-label="API key status">
        <span className="key-badge" data-set={settings.hasApiKey}>
          {settings.hasApiKey ? <icons.check /> : <icons.alert />}
          {settings.hasApiKey ? 'Set' : 'Not set'}
        </span>
        <span
          className="key-source"
          data-warning={settings.apiKeySource === 'plaintext' || undefined}
        >
          {keySourceText(settings)}
        </span>
      </div>
      <form className="key-form" onSubmit={save}>
        <label htmlFor={fieldId} className="field-label">
          {settings.apiKeySource === 'env'
            ? 'Save a key to use instead'
            : settings.hasApiKey
              ? 'Replace with a new key'
              : 'API key'}
        </label>
        <div className="key-row">
          <input
            id={fieldId}
            type="password"
            className="input"
            autoComplete="off"
            spellCheck={false}
            placeholder="sk-ant-…"
            // Without a key this is why the person came: start typing at once.
            data-autofocus={!settings.hasApiKey || undefined}
            value={key}
            onChange={(event) => setKey(event.target.value)}
            aria-describedby={`${fieldId}-help`}
          />
          <button type="submit" className="button button-primary" disabled={busy || !key.trim()}>
            Save key
          </button>
          {stored && (
            <button type="button" className="button" disabled={busy} onClick={() => void remove()}>
              Remove key
            </button>
          )}
        </div>
        <p id={`${fieldId}-help`} className="field-help">
          Entered once, never shown again. Create one at console.anthropic.com.
        </p>
      </form>
      {notice && (
        <Banner tone={notice.tone} label="API key result" onDismiss={() => setNotice(null)}>
          {notice.text}
        </Banner>
      )}
    </section>
  )
}

interface Draft {
  model: string
  maxTokens: string
  customInstructions: string
  createExisting: SettingsView['createExisting']
  secretScanning: boolean
  reviewMode: SettingsView['reviewMode']
  proposeExpiry: boolean
  expireAfterDays: string
}

/** Days suggested when the person turns expiry proposals on. */
const DEFAULT_EXPIRY_DAYS = 90

const draftOf = (s: SettingsView): Draft => ({
  model: s.model,
  maxTokens: String(s.maxTokens),
  customInstructions: s.customInstructions,
  createExisting: s.createExisting,
  secretScanning: s.secretScanning,
  reviewMode: s.reviewMode,
  proposeExpiry: s.expireAfterDays !== null,
  expireAfterDays: String(s.expireAfterDays ?? DEFAULT_EXPIRY_DAYS),
})

function useModels(hasApiKey: boolean) {
  const [models, setModels] = useState<ReadonlyArray<ModelInfo> | null>(null)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    let live = true
    unwrap(api().settings.models()).then(
      (list) => {
        if (!live) return
        setModels(list)
        setError(null)
      },
      (failure: unknown) => live && setError(errorMessage(failure)),
    )
    return () => {
      live = false
    }
  }, [hasApiKey])
  return { models, error }
}

function SettingsForm({
  settings,
  onClose,
  extra,
}: {
  readonly settings: SettingsView
  readonly onClose: () => void
  readonly extra?: ReactNode
}) {
  const { update } = useSettings()
  const [draft, setDraft] = useState<Draft>(() => draftOf(settings))
  const [saving, setSaving] = useState(false)
  const [notice, setNotice] = useState<{ tone: 'success' | 'error'; text: string } | null>(null)
  const { models, error: modelsError } = useModels(settings.hasApiKey)
  const id = useId()

  const maxTokens = Number(draft.maxTokens)
  const maxTokensValid = Number.isInteger(maxTokens) && maxTokens >= 1 && maxTokens <= 128000
  const expiryDays = Number(draft.expireAfterDays)
  const expiryValid =
    !draft.proposeExpiry || (Number.isInteger(expiryDays) && expiryDays >= 1 && expiryDays <= 3650)
  const dirty = JSON.stringify(draft) !== JSON.stringify(draftOf(settings))
  const options = models ?? []
  const modelOptions = options.some((m) => m.id === draft.model)
    ? options
    : [{ id: draft.model, displayName: draft.model }, ...options]

  const change = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setNotice(null)
    setDraft((d) => ({ ...d, [key]: value }))
  }

  const save = async (event: FormEvent) => {
    event.preventDefault()
    if (!maxTokensValid || !expiryValid) return
    const problem = instructionsProblem(draft.customInstructions)
    if (problem) {
      setNotice({ tone: 'error', text: `Settings were not saved. ${problem}` })
      return
    }
    setSaving(true)
    try {
      const saved = await update({
        model: draft.model,
        maxTokens,
        customInstructions: draft.customInstructions,
        createExisting: draft.createExisting,
        secretScanning: draft.secretScanning,
        reviewMode: draft.reviewMode,
        expireAfterDays: draft.proposeExpiry ? expiryDays : null,
      })
      setDraft(draftOf(saved))
      setNotice({ tone: 'success', text: 'Settings saved. They apply from your next message.' })
    } catch (error) {
      setNotice({ tone: 'error', text: `Settings were not saved. ${errorMessage(error)}` })
    } finally {
      setSaving(false)
    }
  }

  // The chosen theme shows at once; main's answer (or a failure) corrects it.
  const [theme, setThemeShown] = useState(settings.theme)
  const [savedTheme, setSavedTheme] = useState(settings.theme)
  if (savedTheme !== settings.theme) {
    setSavedTheme(settings.theme)
    setThemeShown(settings.theme)
  }
  const setTheme = (next: ThemeSetting) => {
    setThemeShown(next)
    update({ theme: next }).catch((error: unknown) => {
      setThemeShown(settings.theme)
      setNotice({ tone: 'error', text: `The theme was not saved. ${errorMessage(error)}` })
    })
  }

  return (
    <>
      <ApiKeySection settings={settings} />

      <form className="settings-form" onSubmit={save} aria-label="Conversation settings">
        <section className="settings-section" aria-labelledby={`${id}-claude`}>
          <h3 id={`${id}-claude`}>Claude</h3>
          <div className="field-grid">
            <label className="field">
              <span className="field-label">Model</span>
              <select
                className="input"
                value={draft.model}
                onChange={(event) => change('model', event.target.value)}
              >
                {modelOptions.map((model) => (
                  <option key={model.id} value={model.id}>
                    {model.displayName}
                  </option>
                ))}
              </select>
              {modelsError && (
                <span className="field-help">
                  The model list could not be loaded ({modelsError}). The current model stays
                  selected.
                </span>
              )}
            </label>
            <label className="field">
              <span className="field-label">Max tokens</span>
              <input
                className="input"
                type="number"
                min={1}
                max={128000}
                step={1}
                value={draft.maxTokens}
                aria-invalid={!maxTokensValid || undefined}
                onChange={(event) => change('maxTokens', event.target.value)}
              />
              <span className="field-help" data-error={!maxTokensValid || undefined}>
                {maxTokensValid
                  ? 'Longest reply per response.'
                  : 'Enter a whole number from 1 to 128,000.'}
              </span>
            </label>
          </div>
          <label className="field">
            <span className="field-label">Custom instructions</span>
            <textarea
              className="input textarea"
              rows={4}
              value={draft.customInstructions}
              maxLength={MAX_INSTRUCTIONS_CHARS}
              aria-describedby={`${id}-instructions-help`}
              placeholder="For example: Answer briefly. I work in Python and TypeScript."
              onChange={(event) => change('customInstructions', event.target.value)}
            />
            <span
              id={`${id}-instructions-help`}
              className="field-help"
              data-error={draft.customInstructions.length >= MAX_INSTRUCTIONS_CHARS || undefined}
            >
              Added to every conversation’s instructions.{' '}
              {instructionsCount(draft.customInstructions)}
              {draft.customInstructions.length >= MAX_INSTRUCTIONS_CHARS &&
                ': the most they can hold'}
              .
            </span>
          </label>
        </section>

        <section className="settings-section" aria-labelledby={`${id}-memory`}>
          <h3 id={`${id}-memory`}>Memory</h3>
          <label className="field">
            <span className="field-label">When Claude creates a file that already exists</span>
            <select
              className="input"
              value={draft.createExisting}
              onChange={(event) =>
                change('createExisting', event.target.value as Draft['createExisting'])
              }
            >
              <option value="overwrite">Replace it (the old version stays in History)</option>
              <option value="error">Refuse, and ask Claude to edit it instead</option>
            </select>
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={draft.secretScanning}
              onChange={(event) => change('secretScanning', event.target.checked)}
            />
            <span>
              <span className="field-label">Secret scanning</span>
              <span className="field-help">
                Refuse memory writes that look like passwords, API keys or tokens.
              </span>
            </span>
          </label>
        </section>

        <section className="settings-section" aria-labelledby={`${id}-review`}>
          <h3 id={`${id}-review`}>Review</h3>
          <label className="field">
            <span className="field-label">Which of Claude’s memory changes wait for you</span>
            <select
              className="input"
              value={draft.reviewMode}
              onChange={(event) => change('reviewMode', event.target.value as Draft['reviewMode'])}
            >
              <option value="off">None: changes land at once</option>
              <option value="flagged">Flagged changes only</option>
              <option value="all">Every change</option>
            </select>
            <span className="field-help">
              A change that waits shows its exact diff on its card in the chat and in the Memory
              pane; you approve it, edit it first, or decline it (Claude is told why). Changes that
              look like instructions to a future assistant, hide invisible characters, delete a
              folder or most of a file, or touch a file you edited today are flagged in History
              whatever you choose here.
            </span>
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={draft.proposeExpiry}
              onChange={(event) => change('proposeExpiry', event.target.checked)}
            />
            <span>
              <span className="field-label">Propose expiring files Claude has not read</span>
              <span className="field-help">
                Cairn suggests removing a file left unread for the number of days below. Nothing is
                removed until you approve it, and History keeps what is.
              </span>
            </span>
          </label>
          {draft.proposeExpiry && (
            <label className="field field-inline">
              <span className="field-label">Unread for</span>
              <input
                className="input input-small"
                type="number"
                min={1}
                max={3650}
                step={1}
                aria-label="Days unread before an expiry is proposed"
                aria-invalid={!expiryValid || undefined}
                value={draft.expireAfterDays}
                onChange={(event) => change('expireAfterDays', event.target.value)}
              />
              <span className="field-help" data-error={!expiryValid || undefined}>
                {expiryValid ? 'days' : 'Enter a whole number of days from 1 to 3,650.'}
              </span>
            </label>
          )}
        </section>

        <div className="settings-save">
          {notice && (
            <Banner tone={notice.tone} label="Save result" onDismiss={() => setNotice(null)}>
              {notice.text}
            </Banner>
          )}
          <div className="dialog-actions">
            <button type="button" className="button" onClick={onClose}>
              Close
            </button>
            <button
              type="submit"
              className="button button-primary"
              disabled={!dirty || !maxTokensValid || !expiryValid || saving}
            >
              {saving ? 'Saving…' : 'Save changes'}
            </button>
          </div>
        </div>
      </form>

      <section className="settings-section" aria-labelledby={`${id}-appearance`}>
        <h3 id={`${id}-appearance`}>Appearance</h3>
        <div role="radiogroup" aria-label="Theme" className="segmented">
          {(['system', 'light', 'dark'] as const).map((option) => (
            <label key={option} className="segment" data-checked={theme === option}>
              <input
                type="radio"
                name="theme"
                value={option}
                checked={theme === option}
                onChange={() => setTheme(option)}
              />
              {option === 'system' ? 'System' : option === 'light' ? 'Light' : 'Dark'}
            </label>
          ))}
        </div>
        <p className="field-help">Applies at once. System follows your computer’s setting.</p>
      </section>

      {extra}
      <DataFolderSection dataDir={settings.dataDir} />
      <ShortcutsSection />
    </>
  )
}

function DataFolderSection({ dataDir }: { readonly dataDir: string }) {
  const [error, setError] = useState<string | null>(null)
  const id = useId()
  const open = () => {
    unwrap(api().app.openDataFolder()).then(
      () => setError(null),
      (failure: unknown) => setError(errorMessage(failure)),
    )
  }
  return (
    <section className="settings-section" aria-labelledby={`${id}-data`}>
      <h3 id={`${id}-data`}>Data folder</h3>
      <p className="field-help">
        Your memory files, their history and your conversations live here, as plain files.
      </p>
      <div className="data-row">
        <code className="data-path" title={dataDir}>
          {dataDir}
        </code>
        <button type="button" className="button" onClick={open}>
          <icons.folder />
          Open folder
        </button>
      </div>
      {error && (
        <Banner tone="error" onDismiss={() => setError(null)}>
          {error}
        </Banner>
      )}
    </section>
  )
}

const shortcuts: ReadonlyArray<[string, string]> = [
  ['Ctrl/⌘ N', 'New chat'],
  ['Ctrl/⌘ L', 'Focus the message field'],
  ['Esc', 'Stop Claude’s reply'],
  ['Ctrl/⌘ 1', 'Show Memory'],
  ['Ctrl/⌘ 2', 'Show History'],
  ['Ctrl/⌘ ,', 'Open Settings'],
  ['F2', 'Rename the focused conversation'],
  ['Del', 'Delete the focused conversation'],
]

function ShortcutsSection() {
  const id = useId()
  return (
    <section className="settings-section" aria-labelledby={`${id}-keys`}>
      <h3 id={`${id}-keys`}>Keyboard shortcuts</h3>
      <dl className="shortcut-list">
        {shortcuts.map(([keys, action]) => (
          <div key={keys} className="shortcut">
            <dt>
              <kbd>{keys}</kbd>
            </dt>
            <dd>{action}</dd>
          </div>
        ))}
      </dl>
    </section>
  )
}
