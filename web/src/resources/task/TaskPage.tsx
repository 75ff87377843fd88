export default function TaskPage () { return null }
