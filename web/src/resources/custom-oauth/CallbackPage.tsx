import { useParams } from 'react-router-dom'
import { useStatus } from '../../api/useStatus'
import { OAuthCallback } from '../auth/OAuthCallback'

/** /oauth/<slug>: where an OpenID Connect / OAuth 2.0 provider the super admin added sends the browser back. */
export default function CustomOAuthCallbackPage () {
  const { slug = '' } = useParams()
  const { status } = useStatus()
  const name = status?.custom_oauth_providers?.find((p) => p.slug === slug)?.name ?? slug
  return <OAuthCallback provider={slug} name={name} />
}
