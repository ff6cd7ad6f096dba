"""A small hand-written glossary from Chinese, Japanese and Korean words to English ones, so a
sentence written in those scripts can match a skill described in English (and the reverse).

Public skills are mostly described in English while people ask in their own language; the
character pairs that match between two CJK texts match nothing in an English description.
Each line is an English word, then words that say the same in Chinese (simplified and
traditional), Japanese and Korean. Only everyday words of software and office work are here;
the judgment's IDF decides how much each one weighs, as for any English word.
"""

from __future__ import annotations

import functools

GLOSSARY = """
document 文档 文檔 文件 ドキュメント 文書 문서
word ワード 워드
spreadsheet 电子表格 試算表 表格 スプレッドシート 스프레드시트
excel エクセル 엑셀
slide 幻灯片 投影片 スライド 슬라이드
presentation 演示文稿 演示 簡報 プレゼン 발표 프레젠테이션
deck 路演 피치덱
table テーブル 테이블
chart 图表 圖表 チャート グラフ 차트 그래프
image 图片 圖片 图像 画像 イメージ 이미지 사진
video 视频 影片 動画 ビデオ 동영상 영상 비디오
audio 音频 音訊 オーディオ 음성 오디오
gif 动图 動圖 움짤
animation 动画 動畫 アニメーション 애니메이션
diagram 示意图 圖解 図 ダイアグラム 다이어그램 도식
flowchart 流程图 流程圖 フローチャート 순서도 플로차트
calendar 日历 日曆 行事历 カレンダー 캘린더 달력
event 事件 活动 活動 イベント 予定 이벤트 일정
meeting 会议 會議 会議 ミーティング 회의 미팅
standup 站会 站立会议 朝会 스탠드업
schedule 日程 排期 スケジュール 스케줄
email 邮件 郵件 电子邮件 メール 이메일 메일
message 消息 訊息 メッセージ 메시지
commit 提交 コミット 커밋
branch 分支 ブランチ 브랜치
merge 合并 合併 マージ 병합 머지
conflict 冲突 衝突 競合 충돌
rebase 变基 リベース 리베이스
diff 差分 差异 変更差分 변경사항
review 审查 審查 审核 评审 レビュー 리뷰 검토
code 代码 程式碼 コード 코드
test 测试 測試 テスト 테스트
bug 缺陷 バグ 버그
error 错误 錯誤 报错 エラー 에러 오류
debug 调试 調試 除错 デバッグ 디버그 디버깅
fix 修复 修復 修正 直して 수정 고쳐
crash 崩溃 崩潰 クラッシュ 크래시
log 日志 日誌 ログ 로그
performance 性能 效能 パフォーマンス 성능
optimize 优化 優化 最適化 최적화
refactor 重构 重構 リファクタ リファクタリング 리팩터 리팩토링
database 数据库 資料庫 データベース 데이터베이스 DB
migration 迁移 遷移 マイグレーション 移行 마이그레이션
schema 架构定义 スキーマ 스키마
index 索引 インデックス 인덱스
query 查询 查詢 クエリ 쿼리 조회
api 接口 介面 インターフェース 인터페이스
server 服务器 伺服器 サーバー サーバ 서버
deploy 部署 デプロイ 배포
install 安装 安裝 インストール 설치
package 包管理 套件 パッケージ 패키지
dependency 依赖 依賴 依存 의존성
environment 环境 環境 환경
workflow 工作流 ワークフロー 워크플로
pipeline 流水线 管道 パイプライン 파이프라인
security 安全 セキュリティ 보안
vulnerability 漏洞 脆弱性 취약점
password 密码 密碼 パスワード 비밀번호
login 登录 登入 ログイン 로그인
authentication 认证 認證 身份验证 認証 인증
permission 权限 權限 権限 권한
user 用户 使用者 ユーザー 사용자 유저
form 表单 表單 フォーム 폼 양식
page 页面 頁面 页码 ページ 페이지
website 网站 網站 ウェブサイト サイト 웹사이트 홈페이지
frontend 前端 フロントエンド 프론트엔드
backend 后端 後端 バックエンド 백엔드
design 设计 設計 デザイン 디자인 설계
layout 布局 レイアウト 레이아웃
font 字体 字體 フォント 폰트 글꼴
color 颜色 顏色 配色 色 カラー 색상
style 样式 風格 风格 スタイル 스타일
template 模板 范本 テンプレート 템플릿
format 格式 フォーマット 형식 포맷
convert 转换 轉換 转成 変換 변환
translate 翻译 翻譯 翻訳 번역
summary 摘要 总结 總結 要約 まとめ 요약
report 报告 報告 报表 周报 レポート 보고서 리포트
article 文章 記事 기사 글
blog 博客 部落格 ブログ 블로그
post 帖子 发帖 投稿 게시물 포스트
write 写 寫 撰写 書いて 作成 작성 써줘
edit 编辑 編輯 編集 편집
plan 计划 計劃 规划 計画 プラン 계획
task 任务 任務 タスク 작업 태스크
ticket 工单 票 チケット 티켓
issue 議題 イシュー 이슈
project 项目 專案 プロジェクト 프로젝트
spec 规格 規格 需求文档 仕様 仕様書 기획서 명세
requirement 需求 要件 요구사항
feature 功能 特性 機能 기능
implement 实现 實作 实施 実装 구현
research 研究 调研 調査 リサーチ 조사 리서치
paper 论文 論文 페이퍼
data 数据 資料 データ 데이터
analysis 分析 分析する 분석
statistics 统计 統計 통계
model 模型 モデル 모델
train 训练 訓練 学習 학습 훈련
agent 代理 智能体 エージェント 에이전트
prompt 提示词 プロンプト 프롬프트
embedding 嵌入 向量化 埋め込み 임베딩
vector 向量 ベクトル 벡터
search 搜索 搜尋 检索 検索 검색
knowledge 知识 知識 지식
wiki 维基 ウィキ 위키
note 笔记 筆記 纪要 メモ ノート 노트 메모
markdown マークダウン 마크다운
screenshot 截图 截圖 スクリーンショット 스크린샷
browser 浏览器 瀏覽器 ブラウザ 브라우저
click 点击 點擊 クリック 클릭
mobile 移动端 手機 モバイル 모바일
app 应用 應用 アプリ 앱
container 容器 コンテナ 컨테이너
cloud 云 雲端 クラウド 클라우드
cost 成本 费用 コスト 費用 비용
price 价格 價格 価格 가격
invoice 发票 發票 請求書 인보이스 청구서
contract 合同 合約 契約 계약
patient 患者 病人 환자
clinical 临床 臨床 임상
gene 基因 遺伝子 유전자
protein 蛋白质 蛋白質 タンパク質 단백질
cell 细胞 細胞 세포
sequence 序列 配列 서열
molecule 分子 분자
chemistry 化学 化學 화학
astronomy 天文 천문
coordinate 坐标 座標 좌표
notebook 笔记本 ノートブック 노트북
terminal 终端 終端 ターミナル 터미널
script 脚本 腳本 スクリプト 스크립트
automation 自动化 自動化 자동화
changelog 变更日志 更新日志 変更履歴 변경로그
release 发布 發布 发版 リリース 릴리스 배포판
version 版本 バージョン 버전
brainstorm 头脑风暴 腦力激盪 ブレスト 브레인스토밍
idea 想法 点子 アイデア 아이디어
human 人类 人写 人間 사람
natural 自然 자연스럽게 자연
team 团队 團隊 チーム 팀
status 状态 狀態 ステータス 상태
update 更新 アップデート 업데이트
company 公司 会社 회사
announcement 通知 公告 お知らせ 공지
newsletter ニュースレター 뉴스레터
faq 常见问题 よくある質問 자주묻는질문
teach 教学 教える 가르쳐
learn 学习 學習 学ぶ 배우
explain 解释 解釋 説明 설명
parallel 并行 並行 並列 병렬
independent 独立 獨立 독립
worktree 工作树 ワークツリー 워크트리
handoff 交接 引き継ぎ 인수인계
conversation 对话 對話 会話 대화
microservice 微服务 微服務 マイクロサービス 마이크로서비스
architecture 架构 架構 アーキテクチャ 아키텍처
cause 原因 원인
root 根本 근본
profiler 性能分析器 プロファイラ 프로파일러
profile 性能分析 プロファイル 프로파일링
summary サマリー 서머리
resolve 解决 解決 해결
conflict コンフリクト 컨플릭트
build 构建 構建 编译 ビルド 빌드
verify 验证 驗證 确认 確認 検証 확인 검증
complete 完成 完了 완료
rule 规则 規則 ルール 규칙
add 添加 增加 追加 추가
downtime 停机 停機 ダウンタイム 다운타임
question 问答 問答 질문
cache 缓存 快取 キャッシュ 캐시
memory 内存 記憶體 メモリ 메모리
cluster 集群 叢集 クラスター クラスタ 클러스터
scale 扩展 擴展 扩容 スケール 확장
share 共享 分享 共有 공유
screen 屏幕 螢幕 画面 화면
product 产品 產品 製品 プロダクト 제품 프로덕트
pandas パンダス 판다스
crawler 爬虫 爬蟲 クローラー 크롤러
scrape 抓取 スクレイピング 스크래핑
web 网页 網頁 ウェブ 웹
docker ドッカー 도커
kubernetes 쿠버네티스
monitor 监控 監控 監視 モニタリング 모니터링
alert 告警 警报 アラート 알림
backup 备份 備份 バックアップ 백업
upload 上传 上傳 アップロード 업로드
download 下载 下載 ダウンロード 다운로드
file 檔案 ファイル 파일
folder 文件夹 目录 資料夾 フォルダ 폴더
excel 电子表 エクセル表
csv 逗号分隔 カンマ区切り
json 제이슨
regex 正则 正規表現 정규식
unit 单元测试 ユニットテスト 단위
end 端到端 エンドツーエンド 엔드투엔드
mock 模拟 モック 목
payment 支付 付款 決済 支払い 결제
order 订单 訂單 注文 주문
customer 客户 客戶 顧客 고객
invoice 账单 帳單
sale 销售 銷售 販売 営業 판매 영업
marketing 营销 行銷 マーケティング 마케팅
seo 搜索引擎优化 검색엔진최적화
social 社交 ソーシャル 소셜
speech 语音 語音 音声 음성인식
transcribe 转录 轉錄 文字起こし 전사 받아쓰기
subtitle 字幕 자막
music 音乐 音樂 音楽 음악
game 游戏 遊戲 ゲーム 게임
map 地图 地圖 地図 マップ 지도
weather 天气 天氣 天気 날씨
stock 股票 株価 주식
finance 财务 財務 金融 ファイナンス 재무 금융
legal 法律 法務 リーガル 법률
tax 税务 稅務 税金 세금
resume 简历 履歴書 이력서
interview 面试 面試 面接 インタビュー 면접 인터뷰
onboarding 入职 入職 オンボーディング 온보딩
"""

# Words of those scripts that hold a glossary word but are other words (a glossary word inside
# one is not that word): an agency is no agent, a helmet no security, a record (レコード) no
# code. Runs are cut by forward maximum matching over one vocabulary, the glossary's words and
# these (as dictionary segmenters cut unspaced text): at each character the longest word that
# starts there is read, and its characters are not read again. A word listed here gives no
# English and hides what is inside it. Written from the words' everyday meanings, like the
# glossary, never from an eval set: each line is the glossary word, then longer words with it.
COMPOUNDS = """
代理 代理店 代理商 總代理 総代理店 代理母
安全 安全帽 安全带 安全帶 安全感 安全期 安全靴 安全ピン 安全運転
보안 보안관
テスト テストステロン
コード レコード コードレス バーコード
ログ カタログ
로그 카탈로그
モデル モデルガン モデルハウス
모델 모델하우스
プラン プランター
管道 管道工 下水管道
分支 分支机构 分支機構
应用 应用题
지도 지도자 지도교수
报告 报告厅
日志 日志本
测试 测试仪
計画 計画停電
计划 计划生育
事件 事件簿
图片 图片社
"""


@functools.cache
def table() -> dict[str, tuple[tuple[str, str], ...]]:
    """first character -> (CJK word, English word; '' for a longer word that is not the
    glossary word inside it), longest words first."""
    out: dict[str, list[tuple[str, str]]] = {}
    for line in GLOSSARY.strip().splitlines():
        english, *words = line.split()
        for w in words:
            if not w.isascii() and len(w) >= 2:  # one character is part of too many words
                out.setdefault(w[0].lower(), []).append((w.lower(), english))
    for line in COMPOUNDS.strip().splitlines():
        for w in line.split()[1:]:
            out.setdefault(w[0].lower(), []).append((w.lower(), ""))
    return {c: tuple(sorted(ws, key=lambda x: -len(x[0]))) for c, ws in out.items()}


def english(run: str) -> list[str]:
    """The English words the glossary gives for a run of CJK text, once per occurrence (at a
    position, only the longest entry that starts there)."""
    return [eng for _, _, eng in spans(run)]


def spans(run: str) -> list[tuple[int, int, str]]:
    """(start, end, English word) of each glossary word found in a run of CJK text, as
    `english` finds them (a longer word of COMPOUNDS hides the glossary word inside it)."""
    found = table()
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(run):
        for word, eng in found.get(run[i], ()):
            if run.startswith(word, i):
                if eng:
                    out.append((i, i + len(word), eng))
                i += len(word) - 1
                break
        i += 1
    return out
