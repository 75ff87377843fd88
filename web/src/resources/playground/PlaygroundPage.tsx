export default function PlaygroundPage () { return null }
