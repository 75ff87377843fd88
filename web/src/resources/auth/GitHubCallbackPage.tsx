import { OAuthCallback } from './OAuthCallback'

/** /oauth/github: where GitHub sends the browser back after the authorize page. */
export default function GitHubCallbackPage () {
  return <OAuthCallback provider='github' name='GitHub' />
}
