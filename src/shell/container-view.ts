// Paths inside a container on this laptop (`docker run -v "$PWD":/src -w /src IMAGE …`, `docker exec c …`,
// a Dockerfile's RUN steps, a compose service). The command in it is walked in the container's own
// coordinates: its working directory is the container's, and `make -C /src/engines/lang/koda` or `cd /src
// && …` name container paths. A container path is this laptop's directory only through a bind mount that
// holds it; any other is unknown (the image's own files, a volume, a container started earlier whose mounts
// the line does not show), so the rules judge it as a directory that could be any, never as the laptop
// path that happens to be spelled the same.
import type { FileAccess, FileRead } from './file-access.js';

export interface ContainerView {
  /** Bind mounts: the container path, and the laptop directory behind it (null: not known). */
  mounts: { target: string; host: string | null }[];
  /** The container's working directory (absolute), or null when the line does not say (the image's WORKDIR). */
  workdir: string | null;
}

/** A container whose mounts the line does not show (`docker exec`, a Dockerfile's RUN). */
export const OPAQUE_CONTAINER: ContainerView = { mounts: [], workdir: null };

function trimSlash(p: string): string {
  return p.replace(/\/+$/, '') || '/';
}

/** The laptop path behind container path `p`, through the bind mount that holds it; null when there is none. */
export function laptopPath(v: ContainerView, p: string | null): string | null {
  if (p === null) return null;
  const path = trimSlash(p);
  let best: { target: string; host: string | null } | null = null;
  for (const m of v.mounts) {
    const t = trimSlash(m.target);
    if ((path === t || path.startsWith(t === '/' ? '/' : `${t}/`)) && (!best || t.length > best.target.length)) best = { target: t, host: m.host };
  }
  if (!best || best.host === null) return null;
  const rest = path.slice(best.target.length).replace(/^\//, '');
  const host = trimSlash(best.host);
  return rest ? `${host === '/' ? '' : host}/${rest}` : host;
}

/** A container started inside another (nested `docker run`): its mounts' host paths are the outer container's. */
export function nestedView(outer: ContainerView, inner: ContainerView): ContainerView {
  return { workdir: inner.workdir, mounts: inner.mounts.map((m) => ({ target: m.target, host: laptopPath(outer, m.host) })) };
}

/** The laptop's files as the container sees them: through its bind mounts; any other path cannot be read. */
export function containerFiles(files: FileAccess, v: ContainerView): FileAccess {
  const unreadable = (p: string): FileRead => ({ kind: 'unreadable', why: `${p} is a path inside a container, not a file offhost can read on this laptop` });
  return {
    read: (p) => {
      const l = laptopPath(v, p);
      return l === null ? unreadable(p) : files.read(l);
    },
    ...(files.list
      ? {
          list: (d: string) => {
            const l = laptopPath(v, d);
            return l === null ? null : files.list!(l);
          },
        }
      : {}),
    ...(files.listFiles
      ? {
          listFiles: (d: string) => {
            const l = laptopPath(v, d);
            return l === null ? null : files.listFiles!(l);
          },
        }
      : {}),
    ...(files.nameKey
      ? {
          nameKey: (d: string) => {
            const l = laptopPath(v, d);
            return l === null ? null : files.nameKey!(l);
          },
        }
      : {}),
    // physical(): the container's own symbolic links are not the laptop's; paths stay as spelled.
  };
}
