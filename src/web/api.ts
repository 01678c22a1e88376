/** The dashboard's API, as the page calls it: same origin, the cookie, JSON. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** What a 401 says signs in here: the key `agent-bus web` printed, or a token (the hub). */
    readonly asks: 'key' | 'token' | null = null,
  ) {
    super(message);
  }
}

async function answer<T>(response: Response): Promise<T> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = body !== null && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string' ? (body as { error: string }).error : `the dashboard answered ${response.status}`;
    const asks = body !== null && typeof body === 'object' ? (body as { asks?: unknown }).asks : null;
    throw new ApiError(response.status, message, asks === 'token' || asks === 'key' ? asks : null);
  }
  return body as T;
}

export async function getJson<T>(path: string, query: Record<string, string | number | null | undefined> = {}): Promise<T> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== null && value !== undefined && value !== '') params.set(key, String(value));
  const search = params.toString();
  return answer<T>(await fetch(search === '' ? path : `${path}?${search}`, { credentials: 'same-origin', headers: { accept: 'application/json' } }));
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(
    await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) }),
  );
}
