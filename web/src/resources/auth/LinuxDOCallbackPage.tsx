export default function LinuxDOCallbackPage () { return null }
