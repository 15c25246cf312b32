import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { AppBoundary } from './components/AppBoundary'
import { OpeningGate } from './features/opening/OpeningGate'
import { pinThemeFromAddress, watchSystemTheme } from './features/settings/use-theme'
import './styles.css'

pinThemeFromAddress()
watchSystemTheme()

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <AppBoundary>
      <OpeningGate>
        <App />
      </OpeningGate>
    </AppBoundary>
  </StrictMode>,
)
