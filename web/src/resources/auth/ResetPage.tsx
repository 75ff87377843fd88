export default function ResetPage () { return null }
