/** Video links recognised from their text alone (contract §9.3): the named forms, nothing else. */
import { describe, expect, test } from 'bun:test'
import { recogniseVideoLink } from '../../shared/media/video-links'

const YT = {
  provider: 'youtube',
  url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
  embedUrl: 'https://www.youtube.com/embed/dQw4w9WgXcQ',
  thumbnailUrl: 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg',
}

describe('recogniseVideoLink', () => {
  test('YouTube: watch?v=, youtu.be/, shorts/ (www, m. or bare host), extra parameters ignored', () => {
    for (const url of [
      'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
      'https://youtube.com/watch?v=dQw4w9WgXcQ&t=42s',
      'https://m.youtube.com/watch?feature=share&v=dQw4w9WgXcQ',
      'https://youtu.be/dQw4w9WgXcQ?si=abc',
      'https://www.youtube.com/shorts/dQw4w9WgXcQ',
      'HTTPS://WWW.YOUTUBE.COM/watch?v=dQw4w9WgXcQ',
    ])
      expect(recogniseVideoLink(url), url).toEqual(YT as never)
  })

  test('Vimeo and Matterport', () => {
    expect(recogniseVideoLink('https://vimeo.com/76979871')).toEqual({
      provider: 'vimeo',
      url: 'https://vimeo.com/76979871',
      embedUrl: 'https://player.vimeo.com/video/76979871',
      thumbnailUrl: null,
    })
    expect(recogniseVideoLink('https://my.matterport.com/show/?m=SxQL3iGyoDo')).toEqual({
      provider: 'matterport',
      url: 'https://my.matterport.com/show/?m=SxQL3iGyoDo',
      embedUrl: 'https://my.matterport.com/show/?m=SxQL3iGyoDo&play=1',
      thumbnailUrl: null,
    })
  })

  test('anything else is not a link: other hosts, paths, ids, http, credentials, ports', () => {
    for (const url of [
      'http://www.youtube.com/watch?v=dQw4w9WgXcQ',
      'https://www.youtube.com/watch?v=short',
      'https://www.youtube.com/watch?v=dQw4w9WgXcQ/../x',
      'https://www.youtube.com/embed/dQw4w9WgXcQ',
      'https://www.youtube.com/channel/UC123',
      'https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ',
      'https://user:pw@www.youtube.com/watch?v=dQw4w9WgXcQ',
      'https://www.youtube.com:8443/watch?v=dQw4w9WgXcQ',
      'https://vimeo.com/channels/staffpicks',
      'https://vimeo.com/76979871/extra',
      'https://my.matterport.com/show/?x=1',
      'https://matterport.com/show/?m=SxQL3iGyoDo',
      'https://example.com/video.mp4',
      'not a url',
    ])
      expect(recogniseVideoLink(url), url).toBeNull()
  })
})
