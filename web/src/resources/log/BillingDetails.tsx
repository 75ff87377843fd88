import { LOG_TYPE } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import { useTranslation } from 'react-i18next'
import { type Breakdown, breakdownOf, isModelCall, num, type Term } from './breakdown'
import { type LogRow, paidByPlan } from './types'

/** The expanded part of a log row: timings, ratios, token split, the formula and what was charged. */
export function BillingDetails ({ row, quotaPerUnit, admin }: { row: LogRow, quotaPerUnit: number, admin: boolean }) {
  const { t } = useTranslation()
  const o = row.other ?? {}
  const b = row.type === LOG_TYPE.consume ? breakdownOf(row, quotaPerUnit) : undefined
  const facts: Array<[string, string]> = []
  // The timings sit in the table from 1536 px only; here at every width.
  if (isModelCall(row.type)) {
    facts.push([t('log.col.useTime'), t('log.seconds', { n: row.use_time })])
    if ((o.frt ?? 0) > 0) facts.push([t('log.col.firstResponse'), t('log.seconds', { n: ((o.frt ?? 0) / 1000).toFixed(1) })])
    facts.push([t('log.breakdown.mode'), row.is_stream ? t('log.stream') : t('log.notStream')])
  }
  // A consumption row says what paid it: a plan's entitlement or the wallet.
  const plan = paidByPlan(row.other)
  if (row.type === LOG_TYPE.consume) facts.push([t('log.paidBy.label'), plan === undefined ? t('log.paidBy.wallet') : t('log.paidBy.plan', { title: plan })])
  if (b?.kind === 'per_call') {
    facts.push([t('log.breakdown.modelPrice'), t('log.breakdown.perCallPrice', { price: num(b.modelPrice) })])
    facts.push([t('log.breakdown.groupRatio'), num(b.groupRatio)])
  }
  if (b?.kind === 'per_token') {
    facts.push([t('log.breakdown.modelRatio'), num(b.modelRatio)])
    facts.push([t('log.breakdown.completionRatio'), num(o.completion_ratio ?? 1)])
    facts.push([t('log.breakdown.groupRatio'), num(b.groupRatio)])
    if (o.cache_ratio !== undefined) facts.push([t('log.breakdown.cacheRatio'), num(o.cache_ratio)])
    facts.push([t('log.breakdown.cachedTokens'), String(o.cached_tokens ?? 0)])
    if (o.cache_write_tokens !== undefined) {
      facts.push([t('log.breakdown.createCacheRatio'), num(o.create_cache_ratio ?? 1)])
      facts.push([t('log.breakdown.cacheWriteTokens'), String(o.cache_write_tokens)])
    }
    if (o.audio === true) {
      facts.push([t('log.breakdown.audioRatio'), num(o.audio_ratio ?? 1)])
      facts.push([t('log.breakdown.audioCompletionRatio'), num(o.audio_completion_ratio ?? 1)])
      facts.push([t('log.breakdown.textInput'), String(o.text_input ?? 0)])
      facts.push([t('log.breakdown.textOutput'), String(o.text_output ?? 0)])
      facts.push([t('log.breakdown.audioInput'), String(o.audio_input ?? 0)])
      facts.push([t('log.breakdown.audioOutput'), String(o.audio_output ?? 0)])
    }
  }
  if (o.upstream_model !== undefined && o.upstream_model !== '' && o.upstream_model !== row.model_name) {
    facts.push([t('log.breakdown.upstreamModel'), o.upstream_model])
  }
  const channels = admin ? o.admin_info?.use_channel ?? [] : []
  if (channels.length > 0) facts.push([t('log.breakdown.channels'), channels.join(' → ')])
  const upstream = admin ? o.admin_info?.error : undefined
  if (upstream !== undefined) facts.push([t('log.breakdown.upstreamError'), `HTTP ${upstream.status}${upstream.code === undefined ? '' : ` ${upstream.code}`}: ${upstream.message}`])

  return (
    <Box sx={{ p: 2 }} data-testid={`log-details-${row.id}`}>
      <Typography variant='subtitle2' gutterBottom>{t('log.breakdown.title')}</Typography>
      {facts.length > 0 && (
        <Stack direction='row' sx={{ flexWrap: 'wrap', gap: 1, mb: 1 }}>
          {facts.map(([label, value]) => <Chip key={label} size='small' variant='outlined' label={`${label}: ${value}`} />)}
        </Stack>
      )}
      {b !== undefined && (
        <>
          <Typography variant='body2' sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere' }} data-testid='log-formula'>
            {t('log.breakdown.formula')}: {formulaText(b, t)}
          </Typography>
          <Typography variant='body2' sx={{ mt: 0.5 }}>
            {t('log.breakdown.charged', { quota: row.quota, money: `$${num(row.quota / quotaPerUnit)}` })}
          </Typography>
        </>
      )}
      {o.usage_source === 'counted' && <Typography variant='body2' color='text.secondary' sx={{ mt: 0.5 }}>{t('log.breakdown.counted')}</Typography>}
      {row.content !== '' && (
        <Typography variant='body2' sx={{ mt: 0.5, overflowWrap: 'anywhere' }}>{t('log.breakdown.content')}: {row.content}</Typography>
      )}
      {b === undefined && row.content === '' && facts.length === 0 && (
        <Typography variant='body2' color='text.secondary'>{t('log.breakdown.none')}</Typography>
      )}
    </Box>
  )
}

type T = ReturnType<typeof useTranslation>['t']

function termText (term: Term, t: T): string {
  switch (term.kind) {
    case 'prompt': return t('log.breakdown.term.prompt', { n: term.tokens })
    case 'cached': return t('log.breakdown.term.cached', { n: term.tokens, r: num(term.ratio) })
    case 'cacheWrite': return t('log.breakdown.term.cacheWrite', { n: term.tokens, r: num(term.ratio) })
    case 'audioPrompt': return t('log.breakdown.term.audioPrompt', { n: term.tokens, r: num(term.ratio) })
    case 'completion': return t('log.breakdown.term.completion', { n: term.tokens, r: num(term.ratio) })
    case 'audioCompletion': return t('log.breakdown.term.audioCompletion', { n: term.tokens, r: num(term.ratio), c: num(term.completionRatio) })
  }
}

/** e.g. "(prompt 100 + completion 50 × completion ratio 4) × model ratio 1.25 × group ratio 1 = 375". */
export function formulaText (b: Breakdown, t: T): string {
  if (b.kind === 'per_call') {
    return t('log.breakdown.perCall', { price: num(b.modelPrice), group: num(b.groupRatio), dollars: num(b.dollars), result: num(Math.round(b.exact)) })
  }
  return t('log.breakdown.perToken', {
    terms: b.terms.map((term) => termText(term, t)).join(' + '),
    model: num(b.modelRatio),
    group: num(b.groupRatio),
    result: num(b.exact)
  })
}
