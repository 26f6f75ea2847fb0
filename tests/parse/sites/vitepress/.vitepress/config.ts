import { defineConfig } from 'vitepress'

export default defineConfig({
  lang: 'zh-CN',
  title: '潮汐备份',
  themeConfig: { nav: [{ text: '指南', link: '/guide/getting-started' }] },
})
