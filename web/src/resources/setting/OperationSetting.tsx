import Stack from '@mui/material/Stack'
import { useTranslation } from 'react-i18next'
import { CheckinSettingCard } from '../settings-admin/CheckinSettingCard'
import { ClearLogs } from '../settings-admin/ClearLogs'
import { ModelRatioCard } from '../settings-admin/ModelRatioCard'
import { FieldsCard } from '../settings-admin/OptionCard'
import { OptionsProvider, useOptions } from '../settings-admin/OptionsProvider'

/** The super admin's operation options. */
export default function OperationSetting () {
  return (
    <OptionsProvider>
      <OperationCards />
    </OptionsProvider>
  )
}

function OperationCards () {
  const { t } = useTranslation()
  const { options } = useOptions()
  // Quota amounts are also shown in dollars, at the stored rate (not one being edited).
  const perUnit = Number(options.QuotaPerUnit?.value) > 0 ? Number(options.QuotaPerUnit?.value) : 500_000
  const worth = (v: string) => t('settingsAdmin.help.worth', { value: Number.isFinite(Number(v)) ? `$${Number((Number(v) / perUnit).toFixed(6))}` : '-' })
  const ratioRule = { shape: 'object', values: 'ratio' } as const

  return (
    <Stack sx={{ gap: 2 }}>
      <FieldsCard
        id='general'
        title={t('settingsAdmin.cards.general')}
        fields={[
          { kind: 'text', key: 'TopUpLink', label: t('settingsAdmin.fields.TopUpLink'), help: t('settingsAdmin.help.TopUpLink'), placeholder: 'https://' },
          { kind: 'number', key: 'QuotaPerUnit', label: t('settingsAdmin.fields.QuotaPerUnit'), help: t('settingsAdmin.help.QuotaPerUnit'), min: 1 },
          { kind: 'text', key: 'ChatLink', label: t('settingsAdmin.fields.ChatLink'), help: t('settingsAdmin.help.ChatLink'), placeholder: 'https://' },
          { kind: 'text', key: 'ChatLink2', label: t('settingsAdmin.fields.ChatLink2'), help: t('settingsAdmin.help.ChatLink'), placeholder: 'https://' },
          { kind: 'number', key: 'RetryTimes', label: t('settingsAdmin.fields.RetryTimes'), help: t('settingsAdmin.help.RetryTimes'), min: 0, max: 10, integer: true },
          { kind: 'switch', key: 'DisplayInCurrencyEnabled', label: t('settingsAdmin.fields.DisplayInCurrencyEnabled') },
          { kind: 'switch', key: 'DisplayTokenStatEnabled', label: t('settingsAdmin.fields.DisplayTokenStatEnabled') },
          { kind: 'switch', key: 'DefaultCollapseSidebar', label: t('settingsAdmin.fields.DefaultCollapseSidebar') }
        ]}
      />
      <FieldsCard
        id='drawing'
        title={t('settingsAdmin.cards.drawing')}
        fields={[
          { kind: 'switch', key: 'DrawingEnabled', label: t('settingsAdmin.fields.DrawingEnabled') },
          { kind: 'switch', key: 'TaskEnabled', label: t('settingsAdmin.fields.TaskEnabled') },
          { kind: 'switch', key: 'MjNotifyEnabled', label: t('settingsAdmin.fields.MjNotifyEnabled'), help: t('settingsAdmin.help.MjNotifyEnabled') },
          { kind: 'switch', key: 'MjAccountFilterEnabled', label: t('settingsAdmin.fields.MjAccountFilterEnabled'), help: t('settingsAdmin.help.MjAccountFilterEnabled') },
          { kind: 'switch', key: 'MjForwardUrlEnabled', label: t('settingsAdmin.fields.MjForwardUrlEnabled'), help: t('settingsAdmin.help.MjForwardUrlEnabled') },
          { kind: 'switch', key: 'MjModeClearEnabled', label: t('settingsAdmin.fields.MjModeClearEnabled'), help: t('settingsAdmin.help.MjModeClearEnabled') },
          { kind: 'switch', key: 'MjActionCheckSuccessEnabled', label: t('settingsAdmin.fields.MjActionCheckSuccessEnabled'), help: t('settingsAdmin.help.MjActionCheckSuccessEnabled') }
        ]}
      />
      <FieldsCard
        id='sensitive'
        title={t('settingsAdmin.cards.sensitive')}
        fields={[
          { kind: 'switch', key: 'CheckSensitiveEnabled', label: t('settingsAdmin.fields.CheckSensitiveEnabled') },
          { kind: 'switch', key: 'CheckSensitiveOnPromptEnabled', label: t('settingsAdmin.fields.CheckSensitiveOnPromptEnabled') },
          { kind: 'text', key: 'SensitiveWords', label: t('settingsAdmin.fields.SensitiveWords'), help: t('settingsAdmin.help.SensitiveWords'), rows: 6 }
        ]}
      />
      <FieldsCard
        id='log'
        title={t('settingsAdmin.cards.log')}
        fields={[
          { kind: 'switch', key: 'LogConsumeEnabled', label: t('settingsAdmin.fields.LogConsumeEnabled'), help: t('settingsAdmin.help.LogConsumeEnabled') },
          { kind: 'switch', key: 'ErrorLogEnabled', label: t('settingsAdmin.fields.ErrorLogEnabled'), help: t('settingsAdmin.help.ErrorLogEnabled') },
          { kind: 'number', key: 'LogRetentionDays', label: t('settingsAdmin.fields.LogRetentionDays'), help: t('settingsAdmin.help.LogRetentionDays'), min: 0, max: 36500, integer: true },
          { kind: 'number', key: 'AuditLogRetentionDays', label: t('settingsAdmin.fields.AuditLogRetentionDays'), help: t('settingsAdmin.help.AuditLogRetentionDays'), min: 0, max: 36500, integer: true }
        ]}
        extra={() => <ClearLogs />}
      />
      <FieldsCard
        id='dashboard'
        title={t('settingsAdmin.cards.dashboard')}
        fields={[
          { kind: 'switch', key: 'DataExportEnabled', label: t('settingsAdmin.fields.DataExportEnabled'), help: t('settingsAdmin.help.DataExportEnabled'), wide: true },
          { kind: 'number', key: 'DataExportInterval', label: t('settingsAdmin.fields.DataExportInterval'), help: t('settingsAdmin.help.DataExportInterval'), min: 1, max: 1440, integer: true },
          {
            kind: 'select',
            key: 'DataExportDefaultTime',
            label: t('settingsAdmin.fields.DataExportDefaultTime'),
            choices: [
              { value: 'hour', label: t('settingsAdmin.choices.hour') },
              { value: 'day', label: t('settingsAdmin.choices.day') },
              { value: 'week', label: t('settingsAdmin.choices.week') }
            ]
          }
        ]}
      />
      <FieldsCard
        id='monitoring'
        title={t('settingsAdmin.cards.monitoring')}
        fields={[
          { kind: 'number', key: 'ChannelDisableThreshold', label: t('settingsAdmin.fields.ChannelDisableThreshold'), help: t('settingsAdmin.help.ChannelDisableThreshold'), min: 0 },
          { kind: 'number', key: 'QuotaRemindThreshold', label: t('settingsAdmin.fields.QuotaRemindThreshold'), help: (v) => `${t('settingsAdmin.help.QuotaRemindThreshold')} ${worth(v)}`, min: 0, integer: true },
          { kind: 'switch', key: 'AutomaticDisableChannelEnabled', label: t('settingsAdmin.fields.AutomaticDisableChannelEnabled'), help: t('settingsAdmin.help.AutomaticDisableChannelEnabled') },
          { kind: 'switch', key: 'AutomaticEnableChannelEnabled', label: t('settingsAdmin.fields.AutomaticEnableChannelEnabled'), help: t('settingsAdmin.help.AutomaticEnableChannelEnabled') }
        ]}
      />
      <FieldsCard
        id='ratelimit'
        title={t('settingsAdmin.cards.rateLimit')}
        fields={[
          { kind: 'switch', key: 'ModelRequestRateLimitEnabled', label: t('settingsAdmin.fields.ModelRequestRateLimitEnabled'), wide: true },
          { kind: 'number', key: 'ModelRequestRateLimitDurationMinutes', label: t('settingsAdmin.fields.ModelRequestRateLimitDurationMinutes'), min: 1, max: 1440, integer: true },
          { kind: 'number', key: 'ModelRequestRateLimitCount', label: t('settingsAdmin.fields.ModelRequestRateLimitCount'), help: t('settingsAdmin.help.ModelRequestRateLimitCount'), min: 0, integer: true },
          { kind: 'number', key: 'ModelRequestRateLimitSuccessCount', label: t('settingsAdmin.fields.ModelRequestRateLimitSuccessCount'), help: t('settingsAdmin.help.ModelRequestRateLimitSuccessCount'), min: 1, integer: true }
        ]}
      />
      <FieldsCard
        id='quota'
        title={t('settingsAdmin.cards.quota')}
        fields={[
          { kind: 'number', key: 'QuotaForNewUser', label: t('settingsAdmin.fields.QuotaForNewUser'), help: worth, min: 0, integer: true },
          { kind: 'number', key: 'PreConsumedQuota', label: t('settingsAdmin.fields.PreConsumedQuota'), help: (v) => `${t('settingsAdmin.help.PreConsumedQuota')} ${worth(v)}`, min: 0, integer: true },
          { kind: 'number', key: 'QuotaForInviter', label: t('settingsAdmin.fields.QuotaForInviter'), help: worth, min: 0, integer: true },
          { kind: 'number', key: 'QuotaForInvitee', label: t('settingsAdmin.fields.QuotaForInvitee'), help: worth, min: 0, integer: true }
        ]}
      />
      <CheckinSettingCard worth={worth} />
      <FieldsCard
        id='chats'
        title={t('settingsAdmin.cards.chats')}
        fields={[
          { kind: 'json', key: 'Chats', label: t('settingsAdmin.fields.Chats'), help: t('settingsAdmin.help.Chats'), rule: { shape: 'array' }, placeholder: '[{"Chat": "https://chat.example.com/#/?settings={\\"key\\":\\"{key}\\",\\"url\\":\\"{address}\\"}"}]' }
        ]}
      />
      <FieldsCard
        id='groups'
        title={t('settingsAdmin.cards.groups')}
        fields={[
          { kind: 'json', key: 'GroupRatio', label: t('settingsAdmin.fields.GroupRatio'), help: t('settingsAdmin.help.GroupRatio'), rule: ratioRule },
          { kind: 'json', key: 'UserUsableGroups', label: t('settingsAdmin.fields.UserUsableGroups'), help: t('settingsAdmin.help.UserUsableGroups'), rule: { shape: 'object', values: 'string' } }
        ]}
      />
      <ModelRatioCard />
    </Stack>
  )
}
