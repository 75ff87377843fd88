export default function TokenPage () { return null }
