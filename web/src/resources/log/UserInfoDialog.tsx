import { ROLES } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogTitle from '@mui/material/DialogTitle'
import Table from '@mui/material/Table'
import TableBody from '@mui/material/TableBody'
import TableCell from '@mui/material/TableCell'
import TableRow from '@mui/material/TableRow'
import { useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { renderNumber, renderQuota } from '../../lib/format'
import { useLoad } from '../../lib/useLoad'
import { fetchUser } from './api'

/** Admins: the account behind a username of the log (GET /api/user/{id}). */
export function UserInfoDialog ({ userId, onClose }: { userId: number | undefined, onClose: () => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const load = useMemo(() => userId === undefined ? undefined : async () => await fetchUser(userId), [userId])
  const loaded = useLoad(load, { fresh: true, onError: onClose }).data
  // Closing empties the dialog.
  const user = userId === undefined ? undefined : loaded

  const role = (r: number) => r >= ROLES.root ? t('log.user.roles.root') : r >= ROLES.admin ? t('log.user.roles.admin') : r >= ROLES.common ? t('log.user.roles.common') : t('log.user.roles.unknown')
  const rows: Array<[string, string]> = user === undefined
    ? []
    : [
        [t('log.user.username'), user.username],
        [t('log.user.displayName'), user.display_name],
        [t('log.user.quota'), renderQuota(user.quota, status, 4)],
        [t('log.user.usedQuota'), renderQuota(user.used_quota, status, 4)],
        [t('log.user.requests'), renderNumber(user.request_count)],
        [t('log.user.group'), user.group],
        [t('log.user.role'), role(user.role)]
      ]
  return (
    <Dialog open={userId !== undefined} onClose={onClose} fullWidth maxWidth='xs'>
      <DialogTitle>{t('log.user.title')}</DialogTitle>
      <DialogContent>
        {user === undefined
          ? <CircularProgress size={24} />
          : (
            <Table size='small' data-testid='user-info'>
              <TableBody>
                {rows.map(([label, value]) => (
                  <TableRow key={label}>
                    <TableCell component='th' scope='row' sx={{ fontWeight: 500, width: '45%' }}>{label}</TableCell>
                    <TableCell sx={{ overflowWrap: 'anywhere' }}>{value}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
            )}
      </DialogContent>
      <DialogActions><Button onClick={onClose}>{t('common.close')}</Button></DialogActions>
    </Dialog>
  )
}
