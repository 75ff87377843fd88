export default function TopupPage () { return null }
