export default function GitHubCallbackPage () { return null }
