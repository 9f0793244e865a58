/** Paths the dashboard answers; the evidence API's bearer-token guard leaves them to it. */
export function isDashboardPath(path: string): boolean {
  return path === '/' || path === '/login' || path === '/logout' || path === '/favicon.ico' || path.startsWith('/assets/') || path.startsWith('/ui/')
}
