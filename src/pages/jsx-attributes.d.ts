// Standard attributes @kitajs/html's JSX types lack (HTML Living Standard): the face check needs both.
declare namespace JSX {
  interface HtmlVideoTag {
    playsinline?: boolean
  }
  interface HtmlInputTag {
    capture?: 'user' | 'environment'
  }
}
