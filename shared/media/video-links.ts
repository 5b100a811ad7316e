/**
 * Video links (contract §9.3): a YouTube, Vimeo or Matterport URL recognised from its text alone,
 * never fetched, and turned into the provider's canonical page, embed form and (YouTube) poster.
 * Only the forms the contract names are recognised; anything else is refused.
 */

export type VideoProvider = 'youtube' | 'vimeo' | 'matterport'

export interface RecognisedLink {
  provider: VideoProvider
  /** The provider's canonical page for the video or tour. */
  url: string
  embedUrl: string
  /** Derivable for YouTube only. */
  thumbnailUrl: string | null
}

const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com'])
const YOUTUBE_ID = /^[A-Za-z0-9_-]{11}$/
const VIMEO_HOSTS = new Set(['vimeo.com', 'www.vimeo.com'])
const VIMEO_ID = /^[0-9]{1,12}$/
const MATTERPORT_ID = /^[A-Za-z0-9]{1,64}$/

const youtube = (id: string): RecognisedLink => ({
  provider: 'youtube',
  url: `https://www.youtube.com/watch?v=${id}`,
  embedUrl: `https://www.youtube.com/embed/${id}`,
  thumbnailUrl: `https://i.ytimg.com/vi/${id}/hqdefault.jpg`,
})

/** The link, or null when it is not one of the recognised forms (an https URL of YouTube, Vimeo or Matterport). */
export function recogniseVideoLink(text: string): RecognisedLink | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return null
  }
  if (url.protocol !== 'https:' || url.username || url.password || url.port) return null
  const host = url.hostname.toLowerCase()
  const segments = url.pathname.split('/').filter(Boolean)

  if (YOUTUBE_HOSTS.has(host)) {
    if (segments.length === 1 && segments[0] === 'watch') {
      const id = url.searchParams.get('v')
      return id && YOUTUBE_ID.test(id) ? youtube(id) : null
    }
    if (segments.length === 2 && segments[0] === 'shorts' && YOUTUBE_ID.test(segments[1])) return youtube(segments[1])
    return null
  }
  if (host === 'youtu.be') return segments.length === 1 && YOUTUBE_ID.test(segments[0]) ? youtube(segments[0]) : null

  if (VIMEO_HOSTS.has(host)) {
    if (segments.length !== 1 || !VIMEO_ID.test(segments[0])) return null
    const id = segments[0]
    return { provider: 'vimeo', url: `https://vimeo.com/${id}`, embedUrl: `https://player.vimeo.com/video/${id}`, thumbnailUrl: null }
  }

  if (host === 'my.matterport.com') {
    if (segments.length !== 1 || segments[0] !== 'show') return null
    const id = url.searchParams.get('m')
    if (!id || !MATTERPORT_ID.test(id)) return null
    return {
      provider: 'matterport',
      url: `https://my.matterport.com/show/?m=${id}`,
      embedUrl: `https://my.matterport.com/show/?m=${id}&play=1`,
      thumbnailUrl: null,
    }
  }
  return null
}
