import type { UserView } from '@modelgate/contracts'
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
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { renderNumber, renderQuota } from '../../lib/format'
import { fetchUser } from './api'

/** Admins: the account behind a username of the log (GET /api/user/{id}). */
export function UserInfoDialog ({ userId, onClose }: { userId: number | undefined, onClose: () => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const [user, setUser] = useState<UserView | undefined>()

  useEffect(() => {
    setUser(undefined)
    if (userId === undefined) return
    let live = true
    fetchUser(userId).then((u) => { if (live) setUser(u) }, (err: unknown) => {
      if (!live) return
      notify.error(err)
      onClose()
    })
    return () => { live = false }
  }, [userId, notify, onClose])

  const role = (r: number) => r >= 100 ? t('log.user.roles.root') : r >= 10 ? t('log.user.roles.admin') : r >= 1 ? t('log.user.roles.common') : t('log.user.roles.unknown')
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
