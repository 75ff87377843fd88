export default function DetailPage () { return null }
