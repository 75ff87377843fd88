import { OAuthCallback } from './OAuthCallback'

/** /oauth/linuxdo: where LinuxDO Connect sends the browser back after the authorize page. */
export default function LinuxDOCallbackPage () {
  return <OAuthCallback provider='linuxdo' name='LinuxDO' />
}
