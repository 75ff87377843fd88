import type { CustomOAuthProviderCreateBody, CustomOAuthProviderView, TokenAuthMethodName } from '@modelgate/contracts'
import { CUSTOM_OAUTH_SLUG_PATTERN } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import FormControlLabel from '@mui/material/FormControlLabel'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, type ReactNode, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { FormDrawer } from '../../components/FormDrawer'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { useAction } from '../../lib/useAction'
import { createProvider, discover, updateProvider } from './api'

type Form = Required<Omit<CustomOAuthProviderCreateBody, 'client_secret'>> & { client_secret: string }

const EMPTY: Form = {
  name: '',
  slug: '',
  kind: 'oidc',
  enabled: true,
  auto_register: true,
  client_id: '',
  client_secret: '',
  token_endpoint_auth_method: 'client_secret_basic',
  issuer: '',
  authorization_endpoint: '',
  token_endpoint: '',
  user_info_endpoint: '',
  jwks_url: '',
  scopes: '',
  user_id_field: '',
  username_field: '',
  display_name_field: '',
  email_field: ''
}

function formOf (p: CustomOAuthProviderView): Form {
  const { id: _id, client_secret_hint: _hint, client_secret_set: _set, created_at: _c, updated_at: _u, ...fields } = p
  return { ...fields, client_secret: '' }
}

const SLUG = new RegExp(CUSTOM_OAUTH_SLUG_PATTERN)

function Section ({ title, help, children }: { title: string, help?: string, children: ReactNode }) {
  return (
    <Stack spacing={1.5} component='fieldset' sx={{ border: 0, p: 0, m: 0, minWidth: 0 }}>
      <Typography component='legend' variant='subtitle2' sx={{ p: 0 }}>{title}</Typography>
      {help !== undefined && <Typography variant='body2' color='text.secondary'>{help}</Typography>}
      {children}
    </Stack>
  )
}

const pair = { display: 'grid', gridTemplateColumns: { xs: 'minmax(0, 1fr)', sm: 'repeat(2, minmax(0, 1fr))' }, gap: 1.5 } as const

/**
 * Adds or edits one provider: discovery from an issuer URL fills the endpoints; the client secret
 * is write-only (blank keeps the stored one), and setting it asks for a fresh verification.
 */
export function ProviderDrawer ({ provider, callbackBase, onClose, onSaved }: {
  /** The provider to edit; undefined adds one. */
  provider: CustomOAuthProviderView | undefined
  /** Where users' browsers reach the console (ServerAddress, else this page's origin). */
  callbackBase: string
  onClose: () => void
  onSaved: () => void
}) {
  const { t } = useTranslation()
  const notify = useNotify()
  const { withVerification } = useVerification()
  const [form, setForm] = useState<Form>(provider === undefined ? EMPTY : formOf(provider))
  const [issuerUrl, setIssuerUrl] = useState(provider?.issuer ?? '')
  const { act: discoverAct, busy: discovering } = useAction()
  const { act, busy: saving } = useAction()
  const [errors, setErrors] = useState<Partial<Record<keyof Form, string>>>({})
  const set = <K extends keyof Form>(key: K, value: Form[K]) => { setForm((f) => ({ ...f, [key]: value })) }
  const text = (key: keyof Form, label: string, extra: { help?: string, placeholder?: string, type?: string, required?: boolean } = {}) => (
    <TextField
      label={label}
      value={form[key]}
      onChange={(e) => { set(key, e.target.value as never) }}
      size='small'
      fullWidth
      required={extra.required}
      type={extra.type}
      placeholder={extra.placeholder}
      error={errors[key] !== undefined}
      helperText={errors[key] ?? extra.help}
      disabled={saving}
      slotProps={extra.placeholder !== undefined ? { inputLabel: { shrink: true } } : undefined}
    />
  )

  const runDiscovery = async () => {
    if (issuerUrl.trim() === '') return
    await discoverAct(async () => {
      const found = await discover(issuerUrl.trim())
      setForm((f) => ({
        ...f,
        kind: 'oidc',
        issuer: found.issuer,
        authorization_endpoint: found.authorization_endpoint,
        token_endpoint: found.token_endpoint,
        user_info_endpoint: found.user_info_endpoint,
        jwks_url: found.jwks_url,
        scopes: f.scopes === '' ? found.scopes : f.scopes,
        token_endpoint_auth_method: found.token_endpoint_auth_method
      }))
    }, { done: t('customOAuth.drawer.discovered') })
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const problems: Partial<Record<keyof Form, string>> = {}
    if (form.name.trim() === '') problems.name = t('customOAuth.drawer.nameRequired')
    if (!SLUG.test(form.slug)) problems.slug = t('customOAuth.drawer.slugInvalid')
    if (form.client_id.trim() === '') problems.client_id = t('customOAuth.drawer.clientIdRequired')
    setErrors(problems)
    if (Object.keys(problems).length > 0) return
    await act(async () => {
      const answer = await withVerification(async () => provider === undefined ? await createProvider(form) : await updateProvider(provider.id, form))
      notify.success(answer.message !== '' ? answer.message : t(provider === undefined ? 'customOAuth.drawer.created' : 'customOAuth.drawer.updated'))
      onSaved()
    })
  }

  const callback = `${callbackBase}/oauth/${form.slug === '' ? '<slug>' : form.slug}`
  return (
    <FormDrawer
      open
      title={provider === undefined ? t('customOAuth.drawer.addTitle') : t('customOAuth.drawer.editTitle', { name: provider.name })}
      width={560}
      onClose={onClose}
      onSubmit={submit}
      loading={discovering}
      saving={saving}
      submitLabel={t('customOAuth.drawer.save')}
    >
      <Section title={t('customOAuth.drawer.discovery')} help={t('customOAuth.drawer.discoveryHelp')}>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
          <TextField
            label={t('customOAuth.drawer.issuerUrl')}
            value={issuerUrl}
            onChange={(e) => { setIssuerUrl(e.target.value) }}
            size='small'
            fullWidth
            type='url'
            placeholder='https://accounts.example.com'
            slotProps={{ inputLabel: { shrink: true } }}
          />
          <Button variant='outlined' onClick={() => { void runDiscovery() }} disabled={discovering || issuerUrl.trim() === ''} sx={{ flexShrink: 0 }}>
            {t('customOAuth.drawer.discover')}
          </Button>
        </Stack>
      </Section>

      <Section title={t('customOAuth.drawer.basics')}>
        <Box sx={pair}>
          {text('name', t('customOAuth.drawer.name'), { required: true })}
          {text('slug', t('customOAuth.drawer.slug'), { required: true, help: t('customOAuth.drawer.slugHelp', { url: callback }) })}
        </Box>
        <TextField select label={t('customOAuth.drawer.kind')} value={form.kind} onChange={(e) => { set('kind', e.target.value as Form['kind']) }} size='small' fullWidth disabled={saving}>
          <MenuItem value='oidc'>{t('customOAuth.card.oidc')}</MenuItem>
          <MenuItem value='oauth2'>{t('customOAuth.card.oauth2')}</MenuItem>
        </TextField>
        <FormControlLabel control={<Switch checked={form.enabled} onChange={(_e, on) => { set('enabled', on) }} disabled={saving} />} label={t('customOAuth.drawer.enabled')} />
        <FormControlLabel control={<Switch checked={form.auto_register} onChange={(_e, on) => { set('auto_register', on) }} disabled={saving} />} label={t('customOAuth.drawer.autoRegister')} />
      </Section>

      <Section title={t('customOAuth.drawer.client')}>
        <Box sx={pair}>
          {text('client_id', t('customOAuth.drawer.clientId'), { required: true })}
          <TextField
            label={t('customOAuth.drawer.clientSecret')}
            value={form.client_secret}
            onChange={(e) => { set('client_secret', e.target.value) }}
            size='small'
            fullWidth
            type='password'
            autoComplete='new-password'
            disabled={saving}
            placeholder={provider?.client_secret_set === true ? t('customOAuth.drawer.secretSet', { hint: provider.client_secret_hint }) : t('customOAuth.drawer.secretUnset')}
            slotProps={{ inputLabel: { shrink: true } }}
          />
        </Box>
        <TextField
          select
          label={t('customOAuth.drawer.authMethod')}
          value={form.token_endpoint_auth_method}
          onChange={(e) => { set('token_endpoint_auth_method', e.target.value as TokenAuthMethodName) }}
          size='small'
          fullWidth
          disabled={saving}
        >
          <MenuItem value='client_secret_basic'>{t('customOAuth.drawer.basic')}</MenuItem>
          <MenuItem value='client_secret_post'>{t('customOAuth.drawer.post')}</MenuItem>
        </TextField>
      </Section>

      <Section title={t('customOAuth.drawer.endpoints')}>
        {form.kind === 'oidc' && text('issuer', t('customOAuth.drawer.issuer'), { type: 'url', help: t('customOAuth.drawer.issuerHelp') })}
        {text('authorization_endpoint', t('customOAuth.drawer.authorizationEndpoint'), { type: 'url' })}
        {text('token_endpoint', t('customOAuth.drawer.tokenEndpoint'), { type: 'url' })}
        {text('user_info_endpoint', t('customOAuth.drawer.userInfoEndpoint'), { type: 'url' })}
        {form.kind === 'oidc' && text('jwks_url', t('customOAuth.drawer.jwksUrl'), { type: 'url', help: t('customOAuth.drawer.jwksHelp') })}
        {text('scopes', t('customOAuth.drawer.scopes'), { help: t('customOAuth.drawer.scopesHelp') })}
      </Section>

      <Section title={t('customOAuth.drawer.mapping')} help={t('customOAuth.drawer.mappingHelp')}>
        <Box sx={pair}>
          {text('user_id_field', t('customOAuth.drawer.userIdField'), { placeholder: form.kind === 'oidc' ? 'sub' : 'id' })}
          {text('username_field', t('customOAuth.drawer.usernameField'), { placeholder: form.kind === 'oidc' ? 'preferred_username' : 'username, login' })}
          {text('display_name_field', t('customOAuth.drawer.displayNameField'), { placeholder: 'name' })}
          {text('email_field', t('customOAuth.drawer.emailField'), { placeholder: 'email' })}
        </Box>
      </Section>
    </FormDrawer>
  )
}
